/**
 * The skillopt Vitest plugin. Put it in the project that holds your `*.skill.test.ts` files:
 *
 * ```ts
 * projects: [{ extends: true, plugins: [skillopt()], test: { name: 'skills' } }]
 * ```
 *
 * It sets defaults fit for model calls (skill test files only, long timeouts, one file at a time with
 * `env.workers` cases in flight), provides the session to the suites and registers the reporter once.
 * Under `npx skillopt` the CLI has already opened the session; run directly under Vitest, the plugin
 * opens it from the config `skillopt test` would read (`options.config`, else `SKILLOPT_CONFIG`, else
 * `skillopt.yaml` in the folder Vitest runs in), with `SKILLOPT_CFG_OPTIONS` (space-separated).
 */
import type { ViteUserConfig } from 'vitest/config';
import type { TestProject, Vite, Vitest } from 'vitest/node';
import { findConfigPath } from '../config/find.ts';
import { loadConfig } from '../config/load.ts';
import { outRoot } from '../config/out-root.ts';
import { withProfilePrices } from '../sim/profiles.ts';
import { escapeControls } from '../util/control-chars.ts';
import { currentHost, openHost, type SessionHost } from './host.ts';
import { skillConsoleReporter } from './console-reporter.ts';
import { SkillReporter } from './reporter.ts';
import { caseTimeoutMs } from '../suite/case-timeout.ts';
import { discardPrestarted } from './prestart.ts';
import { WARM_POOL_NAME, warmThreadsPool } from './warm-pool.ts';
import { SkillWatch } from './watch.ts';
import { printOut } from '../util/print.ts';

export interface SkillOptPluginOptions {
  /** Config file used when Vitest is run directly (default: $SKILLOPT_CONFIG, else ./skillopt.yaml). */
  config?: string;
  cfgOptions?: string[];
}

const withReporter = new WeakSet<object>();
const watches = new WeakMap<object, SkillWatch>();

/**
 * The session host: the CLI's when it runs us, else one opened from the config findConfigPath finds.
 * Without one, null: the suites then fail at collection with a one-line hint (rather than silently
 * calling the defaults' real endpoint).
 */
async function hostFor(options: SkillOptPluginOptions): Promise<{ host: SessionHost | null; owned: boolean }> {
  const existing = currentHost();
  if (existing) return { host: existing, owned: false };
  const path = findConfigPath(options.config);
  if (!path) return { host: null, owned: false };
  const cfgOptions = options.cfgOptions ?? process.env.SKILLOPT_CFG_OPTIONS?.split(/\s+/).filter(Boolean) ?? [];
  const config = withProfilePrices(loadConfig({ path, cfgOptions }).config);
  const host = await openHost({ config, outDir: outRoot(config, 'test'), log: (l) => printOut(escapeControls(l)) });
  return { host, owned: true };
}

/**
 * Cases in flight: `env.workers`, and a quarter more when no role may have more requests in flight than
 * that. The extra cases wait at the model gateway for a request slot, so a slot an answer frees is taken at
 * once rather than after the answer has crossed to the worker thread and the next case's call has crossed
 * back (scripts/bench-throughput.mjs: 1,000 cases at 50 ms, 2.66 → 2.50 s whole process). Requests in
 * flight stay what they were: the gateway's limit of each role is at most `env.workers` then.
 */
export function casesInFlight(session: Pick<SessionHost['session'], 'config' | 'roles'>): number {
  const workers = Math.max(1, session.config.env.workers);
  const { target, judge } = session.roles;
  return target.concurrency <= workers && judge.concurrency <= workers ? workers + Math.ceil(workers / 4) : workers;
}

const isDefaultReporter = (r: unknown): r is [string, unknown] => Array.isArray(r) && r[0] === 'default';

/** Pools whose workers are threads of this process (they reach the host's model gateway). */
const THREAD_POOLS = new Set([WARM_POOL_NAME, 'threads', 'vmThreads']);

function reachesGateway(pool: unknown): boolean {
  const name = typeof pool === 'string' ? pool : (pool as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && THREAD_POOLS.has(name);
}

export function skillopt(options: SkillOptPluginOptions = {}): Vite.Plugin {
  let opened: Promise<{ host: SessionHost | null; owned: boolean }> | undefined;
  const open = () => (opened ??= hostFor(options));
  return {
    name: 'skillopt',
    /**
     * Defaults only: a key the user's own config sets is left alone. The warm pool (worker threads kept
     * between runs), because every rollout is a fresh Vitest run (scripts/bench-throughput.mjs); worker
     * threads also let the suites reach the host's model gateway.
     */
    async config(user: ViteUserConfig): Promise<Omit<ViteUserConfig, 'plugins'>> {
      const { host } = await open();
      const mine = user.test ?? {};
      if ('pool' in mine) discardPrestarted(); // another pool never takes over the warm pool's thread
      const defaults: Record<string, unknown> = {
        include: ['**/*.skill.test.ts'],
        fileParallelism: false,
        pool: warmThreadsPool(),
      };
      if (host) {
        Object.assign(defaults, {
          testTimeout: caseTimeoutMs(host.session.roles),
          hookTimeout: 120_000,
          maxConcurrency: casesInFlight(host.session),
        });
      }
      return { test: Object.fromEntries(Object.entries(defaults).filter(([k]) => !(k in mine))) };
    },
    async configureVitest({ vitest, project }: { vitest: Vitest; project: TestProject }) {
      const { host, owned } = await open();
      if (!host) return;
      // Worker threads call the model through the host's gateway, which starts a simulated server on the first
      // call; workers of another pool (forks) call it themselves and need its address in the session.
      if (!reachesGateway(project.config.pool)) await host.startModelServer();
      project.provide('skillopt', host.session);
      // Keyed by the resolved config: a config-file restart under `vitest watch` resolves a new one (and
      // new reporters) on the same Vitest instance.
      if (!withReporter.has(vitest.config)) {
        withReporter.add(vitest.config);
        const reporters = vitest.config.reporters as unknown[];
        // Vitest's default console reporter, compact for large runs (src/vitest/console-reporter.ts)
        if (reporters.some(isDefaultReporter)) {
          const SkillConsoleReporter = await skillConsoleReporter();
          reporters.forEach((r, i) => {
            if (isDefaultReporter(r))
              reporters[i] = new SkillConsoleReporter(r[1] as ConstructorParameters<typeof SkillConsoleReporter>[0]);
          });
        }
        reporters.push(new SkillReporter(host));
        if (owned) {
          let closed = false;
          vitest.onClose(() => (closed ? undefined : ((closed = true), host.close())));
        }
      }
      // Watch mode: rerun a suite when its skill or dataset file changes (src/vitest/watch.ts).
      if (vitest.config.watch) {
        let watch = watches.get(vitest.config);
        if (!watch) watches.set(vitest.config, (watch = SkillWatch.install(vitest, host)));
        watch.addProject(project);
      }
    },
  };
}
