/**
 * Watch mode for skill suites (`vitest watch` with the plugin, `skillopt test --watch`).
 *
 * A suite reads its skill and its dataset from disk at collection, in a worker; they are not imports, so
 * Vite's module graph, and with it Vitest's watcher, does not know them. Each suite records the files it
 * read in its test module's meta (src/suite/watched-files.ts). This reporter, added by the plugin when
 * Vitest watches, reads them back after collection, adds them to Vite's file watcher (a file outside the
 * project root is not watched otherwise), and answers Vitest's `watchTriggerPatterns` lookup for a
 * changed file with the test files that use it, so Vitest's own watcher schedules the rerun (debounced,
 * after the current run, respecting its filename filter).
 *
 * Before every rerun (a file change, or a rerun asked for at the keyboard) the session is refreshed and
 * provided again: a skill override held in the session (`skillopt test --skill S`, read once by the CLI)
 * is read again from disk, and the run id changes. Seed skills and datasets need nothing: the suites
 * read them again when they are collected for the rerun.
 */
import { readFileSync } from 'node:fs';
import type { Reporter, TestModule, TestProject, Vitest } from 'vitest/node';
import type { SuiteFiles } from '../suite/watched-files.ts';
import { displayPath } from '../util/paths.ts';
import type { SessionHost } from './host.ts';
import type { SkillOverride } from '../contract/session.ts';

const norm = (p: string) => p.replace(/\\/g, '/');

export class SkillWatch implements Reporter {
  /** Test file → the skill and dataset files its suites read (as last collected). */
  private readonly uses = new Map<string, Set<string>>();
  private readonly watched = new Set<string>();
  private readonly projects = new Set<TestProject>();
  private reruns = 0;
  private announced = '';

  private constructor(
    private readonly vitest: Vitest,
    private readonly host: SessionHost,
  ) {}

  /**
   * Set up watch support on this Vitest (once per resolved config: a config-file restart resolves a new
   * one and gets a new watcher from Vite). Returns the instance so further projects can be added.
   */
  static install(vitest: Vitest, host: SessionHost): SkillWatch {
    const watch = new SkillWatch(vitest, host);
    const config = vitest.config;
    config.watchTriggerPatterns = [
      ...(config.watchTriggerPatterns ?? []),
      // Every changed file is looked up; one no suite reads falls through to Vitest's module-graph logic.
      { pattern: /^/, testsToRun: (file) => watch.testsUsing(file) },
    ];
    vitest.onTestsRerun(() => watch.beforeRerun());
    config.reporters.push(watch as never);
    return watch;
  }

  addProject(project: TestProject): void {
    this.projects.add(project);
  }

  /** The test files whose suites read `file`; undefined when none does. */
  testsUsing(file: string): string[] | undefined {
    const path = norm(file);
    const tests = [...this.uses].filter(([, files]) => files.has(path)).map(([test]) => test);
    return tests.length ? tests : undefined;
  }

  onTestModuleCollected(mod: TestModule): void {
    this.note(mod);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    for (const mod of modules) this.note(mod);
    this.announce();
  }

  private note(mod: TestModule): void {
    const suites: SuiteFiles[] | undefined = mod.meta().skilloptFiles;
    // A module that failed before recording (no session, a syntax error) keeps what it used last time.
    if (!suites?.length) return;
    const files = new Set<string>();
    for (const s of suites) {
      if (s.skill) files.add(s.skill);
      if (s.dataset) files.add(s.dataset);
    }
    this.uses.set(mod.moduleId, files);
    for (const f of files) {
      if (this.watched.has(f)) continue;
      this.watched.add(f);
      // Vite watches the project root already; a file outside it needs adding (adding twice is harmless).
      this.vitest.vite.watcher.add(f);
    }
  }

  /** One line naming the watched files, whenever that list changes (not when the host is quiet). */
  private announce(): void {
    const files = [...new Set([...this.uses.values()].flatMap((s) => [...s]))];
    const line = files
      .map((f) => displayPath(f))
      .sort()
      .join(', ');
    if (!files.length || line === this.announced || this.host.quiet) return;
    this.announced = line;
    this.vitest.logger.log(`[skillopt] watching ${line}: editing one reruns the suites that use it`);
  }

  /** Before a rerun: read skill overrides again, give the run a new id, provide the session again. */
  private beforeRerun(): void {
    const host = this.host;
    const skills: Record<string, SkillOverride> = {};
    for (const [name, override] of Object.entries(host.session.skills)) skills[name] = this.reread(override);
    host.session = { ...host.session, skills, runId: `watch-${++this.reruns}` };
    for (const project of this.projects) project.provide('skillopt', host.session);
  }

  private reread(override: SkillOverride): SkillOverride {
    let text: string;
    try {
      text = readFileSync(override.path, 'utf8');
    } catch (e) {
      this.vitest.logger.error(
        `[skillopt] cannot read the skill ${displayPath(override.path)} (${(e as Error).message}); rerunning with its previous text`,
      );
      return override;
    }
    if (!text.trim()) {
      this.vitest.logger.error(
        `[skillopt] the skill ${displayPath(override.path)} is empty; rerunning with its previous text`,
      );
      return override;
    }
    return text === override.text ? override : { ...override, text };
  }
}
