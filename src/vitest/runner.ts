/**
 * Vitest as the rollout engine: one long-lived Vitest instance whose skill suites are rerun in-process
 * with a new session each time (skill text, split or task ids), the reporter handing back the scored
 * cases. `skillopt eval` and the optimizer both roll out through here; there is no second code path
 * that bypasses the suites.
 */
import { readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { createVitest, parseCLI, type TestSpecification, type Vitest } from 'vitest/node';
import { SkillOptError } from '../util/errors.ts';
import { vitestEnv, vitestStreams } from '../util/io-context.ts';
import { currentHost, installHost, type RunResult, type SessionHost } from './host.ts';
import type { ProvidedSession, SuiteManifest } from '../contract/session.ts';

export interface SuiteRunnerOptions {
  host: SessionHost;
  /** File filters (default: the suite named by env.name, else every *.skill.test file). */
  filters?: string[];
  /** Extra Vitest options (from the command line). */
  vitestOptions?: Record<string, unknown>;
}

/** Vitest's own command-line arguments (what `skillopt test` passes through): file filters and options. */
export function parseVitestArgs(args: string[]): { filters: string[]; options: Record<string, unknown> } {
  const { filter, options } = parseCLI(['vitest', 'run', ...args]);
  const rest = options as Record<string, unknown>;
  delete rest['--'];
  // Vitest's html reporter is its UI (it needs @vitest/ui); skillopt writes its own report.html
  const reporters = ([] as unknown[]).concat(rest.reporter ?? [], rest.reporters ?? []);
  if (reporters.some((r) => r === 'html' || (Array.isArray(r) && r[0] === 'html'))) {
    throw new SkillOptError(
      "--reporter=html is not supported (it is Vitest's UI report and needs @vitest/ui): every skillopt run writes report.html into its output folder; regenerate one with npx skillopt report <dir>",
    );
  }
  return { filters: filter, options: rest };
}

/**
 * The file filter for the suites a config selects. `env.name` names a suite by its `name:`; a file named
 * after it (`<name>.skill.test.ts`, the convention) is the only one loaded. When no file is named so, every
 * skill file loads and each suite whose name differs registers nothing (src/suite/define.ts).
 */
export function defaultFilters(envName: string, root = process.cwd()): string[] {
  return envName &&
    hasFileNamed(root, new RegExp(`^${envName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.skill\\.test\\.[cm]?[jt]s$`))
    ? [`${envName}.skill.test`]
    : ['.skill.test'];
}

const SKIPPED_DIRS = new Set(['node_modules', 'outputs', 'dist', 'coverage']);

/** Whether a file whose name matches `name` exists under `root` (skipping dependencies, outputs and dot folders). */
function hasFileNamed(root: string, name: RegExp, depth = 8): boolean {
  let entries: Dirent[];
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return false;
  }
  if (entries.some((e) => e.isFile() && name.test(e.name))) return true;
  return (
    depth > 0 &&
    entries.some(
      (e) =>
        e.isDirectory() &&
        !e.name.startsWith('.') &&
        !SKIPPED_DIRS.has(e.name) &&
        hasFileNamed(join(root, e.name), name, depth - 1),
    )
  );
}

let opening: Promise<unknown> = Promise.resolve();

/**
 * Run `create` (a Vitest instance starting) with `host` as the process's current host, one at a time: the
 * plugin binds the Vitest instance it configures to the current host, so each of several instances of one
 * process (a matrix run's lanes, src/matrix/lanes.ts) reports to its own.
 */
async function withHostInstalled<T>(host: SessionHost, create: () => Promise<T>): Promise<T> {
  const turn = opening.then(async () => {
    const before = currentHost();
    if (before === host) return create();
    installHost(host);
    try {
      return await create();
    } finally {
      installHost(before);
    }
  });
  opening = turn.catch(() => {});
  return turn;
}

export class SuiteRunner {
  private runs = 0;

  private constructor(
    private readonly vitest: Vitest,
    private readonly specs: TestSpecification[],
    private readonly host: SessionHost,
  ) {}

  static async open(opts: SuiteRunnerOptions): Promise<SuiteRunner> {
    const filters = opts.filters?.length ? opts.filters : defaultFilters(opts.host.session.config.env.name);
    const vitest = await withHostInstalled(opts.host, () =>
      createVitest(
        'test',
        {
          watch: false,
          run: true,
          // Rollouts are reported by the optimizer; Vitest's own reporter stays silent.
          reporters: [{}],
          passWithNoTests: false,
          ...vitestEnv(),
          ...opts.vitestOptions,
        },
        undefined,
        vitestStreams(),
      ),
    );
    try {
      // Reporters and the coverage provider, without running a test: `standalone()` since Vitest 4.1, `init()` in 4.0.
      const standalone = (vitest as Partial<Pick<Vitest, 'standalone'>>).standalone;
      await (standalone ? standalone.call(vitest) : (vitest as unknown as { init(): Promise<void> }).init());
      const specs = (await vitest.globTestSpecifications(filters)).filter((s) =>
        /\.skill\.test\.[cm]?[jt]s$/.test(s.moduleId),
      );
      if (specs.length === 0) {
        throw new SkillOptError(
          `no skill suite matches ${filters.map((f) => `'${f}'`).join(', ')} (expected a *.skill.test.ts file; is env.name right?)`,
        );
      }
      return new SuiteRunner(vitest, specs, opts.host);
    } catch (e) {
      await vitest.close();
      throw e;
    }
  }

  get files(): string[] {
    return this.specs.map((s) => s.moduleId);
  }

  /** One in-process run of the suites with the given session changes. */
  async run(change: Partial<Omit<ProvidedSession, 'config' | 'roles' | 'simulated'>>): Promise<RunResult> {
    const host = this.host;
    host.session = { ...host.session, ...change, runId: `run-${++this.runs}` };
    for (const project of this.vitest.projects) project.provide('skillopt', host.session);
    let captured: RunResult | undefined;
    const previousSink = host.sink;
    host.sink = (r) => {
      captured = r;
    };
    const exitCode = process.exitCode;
    try {
      await this.vitest.runTestSpecifications(this.specs);
    } finally {
      host.sink = previousSink;
      // Vitest marks the process failed when a case fails; rollouts judge results themselves.
      process.exitCode = exitCode;
    }
    if (!captured)
      throw new SkillOptError(
        'the skillopt reporter did not report the run (is the skillopt() plugin in the vitest config?)',
      );
    return captured;
  }

  /** The suites' manifests: splits, seed skill, task types. */
  async manifests(): Promise<SuiteManifest[]> {
    const result = await this.run({ mode: 'manifest', ids: null });
    if (result.errors.length > 0) throw new SkillOptError(result.errors[0]!);
    return result.manifests;
  }

  async close(): Promise<void> {
    await this.vitest.close();
  }
}
