/**
 * Every use skillopt makes of Vitest beyond its public API, in one module (docs/architecture.md#vitest-internals).
 * Each export names what it relies on. The lowest and the highest Vitest of the peer range are tested with
 * them (test/e2e/vitest-versions.test.ts); a Vitest release that changes one of these breaks here.
 *
 * Everything else skillopt does with Vitest is public: the plugin's `configureVitest` and the resolved config
 * it may change, reporters (`DefaultReporter` extended, from `vitest/node`, or `vitest/reporters` in 4.0),
 * the custom pool API (`PoolWorker`, `WorkerRequest`/`WorkerResponse`, the worker side's `vitest/worker`),
 * `createVitest`, `startVitest`, `parseCLI`, `provide`/`inject`, `onCancel`, the collector `describe`
 * returns, and 4.1's `TestRunner`. Where 4.0 and 4.1 differ in those, the caller says so.
 *
 * Nothing here imports Vitest at the top level: the suites' worker threads import this module too, and the
 * main thread's uses load what they need when they are called.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isatty } from 'node:tty';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Vitest } from 'vitest/node';

/* ------------------------------------------------------------------------------------------------------ */
/* The option table of Vitest's CLI                                                                      */
/* ------------------------------------------------------------------------------------------------------ */

/**
 * The option names Vitest's own CLI registers (cac's names: camelCase, one-letter short aliases), read from
 * the installed Vitest, never from a copied list.
 *
 * Relies on: `vitest/node` re-exporting `parseCLI` (public) from a chunk that also exports `createCLI`
 * (not exported by any entry), a function returning the `cac` instance whose `globalCommand.options` holds
 * every option. Vitest has no public list of its flags: `parseCLI` accepts unknown ones silently.
 */
export async function vitestCliOptionNames(): Promise<string[]> {
  const entry = createRequire(import.meta.url).resolve('vitest/node');
  const from = /export\s*\{[^}]*\bas parseCLI\b[^}]*\}\s*from\s*['"]([^'"]+)['"]/.exec(
    readFileSync(entry, 'utf8'),
  )?.[1];
  const chunkUrl = from ? new URL(from, pathToFileURL(entry)) : undefined;
  const exportName = chunkUrl ? /\bcreateCLI as (\w+)\b/.exec(readFileSync(chunkUrl, 'utf8'))?.[1] : undefined;
  const mod = chunkUrl && exportName ? ((await import(chunkUrl.href)) as Record<string, unknown>) : undefined;
  const createCLI = mod?.[exportName!];
  if (typeof createCLI !== 'function') {
    throw new Error(`cannot read the CLI options of the installed Vitest (${entry}): no createCLI beside parseCLI`);
  }
  const cli = (createCLI as () => { globalCommand: { options: Array<{ names: string[] }> } })();
  return cli.globalCommand.options.flatMap((option) => option.names);
}

/* ------------------------------------------------------------------------------------------------------ */
/* The threads pool's worker thread (the warm pool and its prestarted thread, src/vitest/warm-pool.ts)    */
/* ------------------------------------------------------------------------------------------------------ */

export interface ThreadOptions {
  /** Vitest's dist folder (`PoolOptions.distPath`). */
  distPath: string;
  execArgv: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * What Vitest's `threads` pool gives the worker thread of a project with a default config, computed before
 * Vitest is loaded (for the prestarted thread, src/vitest/prestart.ts).
 *
 * Relies on: the pool's `resolveOptions` and `resolveConditions` (Vitest's node/pool.ts): the Node flags
 * `--experimental-import-meta-resolve`, `--require <vitest>/suppress-warnings.cjs` and Vite's default server
 * conditions (`node`, then `development` or `production` by NODE_ENV), and the environment `TEST`, `VITEST`,
 * `NODE_ENV`, `VITEST_MODE`, `FORCE_TTY`; and on `PoolOptions.distPath` being the folder of `vitest/node`.
 * A guess that is wrong costs only the head start: the pool takes the thread over only when its real
 * options give the same threadKey.
 */
export function defaultThreadOptions(): ThreadOptions {
  const distPath = dirname(fileURLToPath(import.meta.resolve('vitest/node')));
  const mode = process.env.NODE_ENV === 'production' ? 'production' : 'development';
  const execArgv = [
    '--experimental-import-meta-resolve',
    '--require',
    join(distPath, '..', 'suppress-warnings.cjs'),
    '--conditions',
    'node',
    '--conditions',
    mode,
  ];
  const env = {
    ...process.env,
    TEST: 'true',
    VITEST: 'true',
    NODE_ENV: process.env.NODE_ENV || 'test',
    VITEST_MODE: 'RUN',
    FORCE_TTY: isatty(1) ? 'true' : '',
  };
  return { distPath, execArgv, env };
}

const FLAGS_WITH_VALUE = new Set([
  '--require',
  '-r',
  '--conditions',
  '-C',
  '--import',
  '--loader',
  '--experimental-loader',
]);

/**
 * Which Vitest runtime a thread loads, with which Node flags: two threads with the same key are
 * interchangeable. The flags are compared as a set (Vitest 4.0 puts the conditions first, 4.1 last).
 */
export function threadKey(distPath: string, execArgv: readonly string[]): string {
  const units: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i]!;
    units.push(FLAGS_WITH_VALUE.has(flag) && i + 1 < execArgv.length ? `${flag} ${execArgv[++i]}` : flag);
  }
  return JSON.stringify([distPath, units.sort()]);
}

/**
 * The file URL of `vitest/worker` (the public entry of a custom pool's worker side) of the Vitest whose dist
 * folder is `distPath`, so a thread loads the runtime of the Vitest that runs it, whichever copy that is.
 *
 * Relies on: `PoolOptions.distPath` being `<the vitest package>/dist` (the type does not say which folder).
 */
export function vitestWorkerEntry(distPath: string): string {
  return pathToFileURL(createRequire(join(distPath, '..', 'package.json')).resolve('vitest/worker')).href;
}

/* ------------------------------------------------------------------------------------------------------ */
/* The worker's run state (read by the suites in the worker thread)                                        */
/* ------------------------------------------------------------------------------------------------------ */

interface WorkerState {
  config?: { maxConcurrency?: number; includeTaskLocation?: boolean; testNamePattern?: unknown; tagsFilter?: unknown };
  ctx?: {
    files?: Array<{
      testLocations?: unknown[];
      testNamePattern?: unknown;
      testIds?: unknown[];
      testTagsFilter?: unknown;
    }>;
  };
}

/** What a suite needs to know of the run its worker is in; null outside a Vitest worker. */
export interface WorkerRun {
  /** Cases Vitest starts at once in this worker (`maxConcurrency`); 0 when unknown. */
  maxConcurrency: number;
  /** Whether a filter of Vitest's own (a name pattern, test ids or lines, tags) may skip some of a file's tests. */
  filtered: boolean;
  /** Whether Vitest records each test's location (`includeTaskLocation`), which needs its definition stack. */
  includeTaskLocation: boolean;
}

/**
 * Relies on: `globalThis.__vitest_worker__`, the worker state Vitest keeps in every worker (its `config`,
 * the resolved config, and `ctx.files`, each file's filters of this request; 4.0 has no per-file filters).
 * Vitest exports no accessor for it to test files.
 */
export function workerRun(): WorkerRun | null {
  const state = (globalThis as { __vitest_worker__?: WorkerState }).__vitest_worker__;
  const config = state?.config;
  if (!config) return null;
  const fileFiltered = (state.ctx?.files ?? []).some(
    (f) => f.testLocations?.length || f.testNamePattern || f.testIds?.length || f.testTagsFilter,
  );
  return {
    maxConcurrency: typeof config.maxConcurrency === 'number' && config.maxConcurrency > 0 ? config.maxConcurrency : 0,
    filtered: Boolean(config.testNamePattern || config.tagsFilter || fileFiltered),
    includeTaskLocation: Boolean(config.includeTaskLocation),
  };
}

/**
 * The meta of the test file being collected (null outside a collection), for Vitest 4.0, whose suite
 * collector has no `file` (4.1's has: src/suite/watched-files.ts uses that).
 *
 * Relies on: `__vitest_worker__.current` holding the file task while the file is collected (the test
 * runner's `onCollectStart`).
 */
export function collectingFileMeta(): Record<string, unknown> | null {
  const current = (
    globalThis as {
      __vitest_worker__?: { current?: { type?: string; filepath?: unknown; meta?: Record<string, unknown> } };
    }
  ).__vitest_worker__?.current;
  return current?.type === 'suite' && typeof current.filepath === 'string' && current.meta ? current.meta : null;
}

/**
 * Run `define` (which defines tests) without the stack Vitest captures for each test it defines: an Error
 * kept with its call sites, about 1 kB a case, 10 MB of a 10,000-case suite. It serves only a test's
 * `location`, and skillopt's cases are defined by the library during collection, where no frame of the suite
 * file is on the stack, so it never finds one. Left alone when Vitest records locations (it would read the
 * missing stack) or when the worker state cannot be read.
 *
 * Relies on: @vitest/runner capturing that stack with `new Error(...)` between a set and a restore of
 * `Error.stackTraceLimit` (V8 captures no stack while `Error.stackTraceLimit` is an accessor, and the
 * runner's set-and-restore goes through it), and on workerRun() for `includeTaskLocation`.
 */
export function withoutCaseStacks(define: () => void): void {
  const own = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
  const run = workerRun();
  if (!own || !('value' in own) || !own.configurable || !run || run.includeTaskLocation) {
    define();
    return;
  }
  let limit: unknown = own.value;
  Object.defineProperty(Error, 'stackTraceLimit', {
    configurable: true,
    enumerable: own.enumerable ?? true,
    get: () => limit,
    set: (v: unknown) => {
      limit = v;
    },
  });
  try {
    define();
  } finally {
    Object.defineProperty(Error, 'stackTraceLimit', { ...own, value: limit });
  }
}

/* ------------------------------------------------------------------------------------------------------ */
/* Taking `--shard` over from Vitest (skill suites shard by task, src/vitest/reporter.ts)                 */
/* ------------------------------------------------------------------------------------------------------ */

export interface FileShard {
  index: number;
  count: number;
}

/**
 * The blob file a Vitest shard writes when `--reporter=blob` names none: `outputFile` with that name added
 * (a string, or an object that names a blob file already, is kept).
 *
 * Relies on: the blob reporter's default file name, `.vitest-reports/blob-<index>-<count>.json`.
 */
export function withShardBlob(outputFile: unknown, shard: FileShard): Record<string, unknown> | string {
  if (typeof outputFile === 'string') return outputFile;
  const files = (outputFile ?? {}) as Record<string, unknown>;
  return files.blob ? files : { ...files, blob: `.vitest-reports/blob-${shard.index}-${shard.count}.json` };
}

/**
 * Take the run's `--shard` away from Vitest before it shards the test files, and return it (null when the
 * run is not sharded). Called from a reporter's `onTestRunStart`. A blob report keeps the shard's name.
 *
 * Relies on: Vitest's pool reading `config.shard` to shard the files after `onTestRunStart` has been
 * reported (node/pool.ts), and the blob reporter naming its file from `config.shard` at the end of the run
 * (hence the name written into `config.outputFile` now).
 */
export function takeOverFileShard(vitest: Vitest): FileShard | null {
  const config = vitest.config as Vitest['config'] & { shard?: FileShard };
  if (!config.shard) return null;
  const { index, count } = config.shard;
  config.outputFile = withShardBlob(config.outputFile, { index, count }) as typeof config.outputFile;
  config.shard = undefined;
  return { index, count };
}
