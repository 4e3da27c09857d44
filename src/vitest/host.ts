/**
 * The session host lives in the main process: it owns the resolved config, the role endpoints (starting
 * the simulated model server when a role is `simulated`), the session handed to the suites, and where
 * the reporter delivers results. The CLI opens one before starting Vitest; the plugin opens one itself
 * when Vitest is run directly. It is found through a process-global slot because the CLI (compiled) and
 * the plugin (loaded by Vitest's config loader) may be different copies of this module.
 */
import { redactConfig } from '../config/redact.ts';
import { resolveRoles } from '../config/roles.ts';
import type { SkillOptConfig } from '../config/schema.ts';
import { openModelGateway, type ModelGateway } from '../model/gateway/server.ts';
import { openModelCache, runLabel, type ModelCache } from '../model/cache/cache.ts';
import type { RoleConfig } from '../model/types.ts';
import { Limiter } from '../model/limiter.ts';
import type { SimServerThread } from '../sim/thread.ts';
import { knobsFromConfig } from '../sim/knobs.ts';
import { simWorldFromConfig } from '../sim/profiles.ts';
import type { RunSummary } from '../suite/summary.ts';
import type { CaseRecord } from '../types.ts';
import type { LoadError, RunVerdict } from '../suite/verdict.ts';
import { discardPrestarted } from './prestart.ts';
import { watchMcpServers } from '../mcp/reaper.ts';
import { CaseBudget } from '../cost/case-budget.ts';
import { printErr } from '../util/print.ts';
import {
  HOST_ENV_FLAG,
  type GateVerdict,
  type ProvidedSession,
  type SuiteManifest,
  type SuiteSelection,
} from '../contract/session.ts';

/** Everything one Vitest run produced, as the reporter saw it. */
export interface RunResult {
  records: CaseRecord[];
  gates: GateVerdict[];
  manifests: SuiteManifest[];
  /** Collection errors, failed hooks, unhandled errors: one line each, first one first. */
  errors: string[];
  /** The same errors, each marked as the user's input mistake (exit 2) or not. */
  loadErrors: LoadError[];
  /** What each suite selected out of its dataset (shards of one suite added up). */
  selections: SuiteSelection[];
  /** The run's verdict, decided by src/suite/verdict.ts. */
  verdict: RunVerdict;
  /** Whether any skill suite took part (a project's other tests leave the exit code alone). */
  skillRun: boolean;
  /** Test files that ran. */
  files: string[];
  wallTimeS: number;
  /** The run's summary, once the reporter has computed it (it does unless the host is quiet). */
  summary?: RunSummary;
}

export interface SessionHost {
  session: ProvidedSession;
  roles: { optimizer: RoleConfig; target: RoleConfig; judge: RoleConfig };
  /** The simulated model server (on a thread of its own) once a `simulated` role's server has started. */
  simServer: SimServerThread | null;
  /**
   * Start the simulated model server now if a role needs it and it has not started (a no-op otherwise):
   * for clients that are not the gateway's, which need its address before their first call.
   */
  startModelServer(): Promise<void>;
  /** Makes the suites' model calls for worker threads of this process. */
  gateway: ModelGateway;
  /** The model-call cache of this session (`cache.mode`; null when off), shared by the gateway and the optimizer. */
  cache: ModelCache | null;
  /** `env.max_cost` of a `test` or an `eval` (docs/accounting.md#budgets): admits the cases; null = no budget. */
  caseBudget: CaseBudget | null;
  /** Where the reporter writes results.jsonl / summary.json; null = do not write. */
  outDir: string | null;
  /** Suppress the reporter's progress lines and table (the optimizer prints its own). */
  quiet: boolean;
  /** Receives every run's results (the CLI and the optimizer listen here). */
  sink: ((result: RunResult) => void) | null;
  /** Receives each case as soon as it finishes (the optimizer persists them for resume). */
  caseSink: ((record: CaseRecord) => void) | null;
  /** Told when a skill suite file has been collected without an error in the user's input (`skillopt test` then shows Vitest's output). */
  suiteLoaded: (() => void) | null;
  close(): Promise<void>;
}

const SLOT = Symbol.for('skillopt.session-host');
type Slot = { [SLOT]?: SessionHost };

export function currentHost(): SessionHost | undefined {
  return (globalThis as Slot)[SLOT];
}

export function installHost(host: SessionHost | undefined): void {
  (globalThis as Slot)[SLOT] = host;
}

export interface OpenHostOptions {
  config: SkillOptConfig;
  session?: Partial<Omit<ProvidedSession, 'config' | 'roles' | 'simulated'>>;
  outDir: string | null;
  quiet?: boolean;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /**
   * `on-demand`: a simulated role's server starts with the first model call the gateway makes, so a run
   * whose suites fail to load starts none (`skillopt test`). Default `eager`: started before openHost
   * returns, for callers that make calls of their own (the optimizer) or hand out the address at once.
   */
  modelServer?: 'eager' | 'on-demand';
  /** `test` / `eval`: apply `env.max_cost` to the cases (when it is set). */
  caseBudget?: boolean;
  /** More model ids the in-process simulated model serves besides the roles' (a matrix run's models). */
  simulatedModels?: readonly string[];
  /**
   * Target roles of several models on one endpoint share one limit of requests in flight (the first one's
   * `concurrency`): a matrix run's cells call the endpoint as one run would.
   */
  shareEndpointLimits?: boolean;
}

/** An endpoint as the limits see it: backend and URL (Azure: its endpoint). */
function endpointKey(role: RoleConfig): string {
  return `${role.role} ${role.backend} ${role.azure?.endpoint ?? role.baseURL}`;
}

/** Resolve roles, start the simulated model if a role needs it (or arrange it for the first call), and install the host. */
export async function openHost(opts: OpenHostOptions): Promise<SessionHost> {
  const roles = resolveRoles(opts.config, opts.env ?? process.env);
  const simulatedRoles = Object.values(roles).filter((r) => r.backend === 'simulated');
  let simServer: SimServerThread | null = null;
  let starting: Promise<string> | null = null;
  let closed = false;
  /** The simulated server's URL, starting it once; every simulated role gets it. */
  const serverUrl = (): Promise<string> =>
    (starting ??= (async () => {
      if (closed) throw new Error('the session is closed: the simulated model server is not started');
      const sim = opts.config.model.simulated;
      const { startSimServerThread } = await import('../sim/thread.ts');
      simServer = await startSimServerThread({
        host: '127.0.0.1',
        port: 0,
        models: [...new Set([...simulatedRoles.map((r) => r.model), ...(opts.simulatedModels ?? [])])],
        ...knobsFromConfig(sim),
        ...simWorldFromConfig(sim),
        log: opts.log ?? (() => {}),
        logRequests: false,
      });
      for (const r of simulatedRoles) r.baseURL = simServer.url;
      return simServer.url;
    })());
  if (simulatedRoles.length > 0 && opts.modelServer !== 'on-demand') await serverUrl();
  const cache = openModelCache(opts.config, { log: opts.log ?? printErr });
  const caseBudget =
    opts.caseBudget && opts.config.env.max_cost > 0
      ? new CaseBudget(opts.config.env.max_cost, opts.config.model.currency)
      : null;
  const limiters = new Map<string, Limiter>();
  const gateway = openModelGateway({
    admission: caseBudget,
    ...(opts.shareEndpointLimits
      ? {
          limiterFor: (role: RoleConfig) => {
            if (role.role !== 'target') return undefined;
            const key = endpointKey(role);
            let limiter = limiters.get(key);
            if (!limiter) limiters.set(key, (limiter = new Limiter(Math.max(1, role.concurrency))));
            return limiter;
          },
        }
      : {}),
    ...(opts.log ? { log: opts.log } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    cache,
    // a worker's copy of a simulated role may predate the server: it gets the server's address here
    resolveRole: (role) =>
      role.backend === 'simulated' && !role.baseURL ? serverUrl().then((baseURL) => ({ ...role, baseURL })) : role,
  });
  // MCP servers the suites start in this process's worker threads: killed if a run leaves any (docs/agents.md#mcp)
  const mcpServers = watchMcpServers();
  const host: SessionHost = {
    session: {
      mode: 'test',
      runId: 'run-0',
      split: 'all',
      ids: null,
      skills: {},
      runDir: opts.outDir,
      ...opts.session,
      // Workers read no secret from the config: API keys come from the environment by name (model/sdk.ts).
      config: redactConfig(opts.config),
      roles: { target: roles.target, judge: roles.judge },
      simulated: simulatedRoles.some((r) => r.role === 'target'),
      gateway: gateway.address,
      ...(caseBudget ? { budgeted: true } : {}),
    },
    roles,
    get simServer() {
      return simServer;
    },
    async startModelServer() {
      if (simulatedRoles.length > 0) await serverUrl();
    },
    gateway,
    cache,
    caseBudget,
    outDir: opts.outDir,
    quiet: opts.quiet ?? false,
    sink: null,
    caseSink: null,
    suiteLoaded: null,
    async close() {
      if (currentHost() === host) {
        installHost(undefined);
        delete process.env[HOST_ENV_FLAG];
      }
      closed = true;
      gateway.close();
      mcpServers.close();
      discardPrestarted();
      cache?.recordRun(runLabel());
      cache?.close();
      // a server still starting is closed once it is up
      if (starting)
        await starting.then(
          () => simServer?.close(),
          () => {},
        );
    },
  };
  installHost(host);
  process.env[HOST_ENV_FLAG] = '1';
  return host;
}

/**
 * A host for another Vitest instance of this process (a matrix run's lane, src/matrix/lanes.ts): the same
 * gateway, model-call cache and simulated server as `main`, a session, sinks and output folder of its own.
 * Closing it closes nothing of `main`'s.
 */
export function laneHost(main: SessionHost): SessionHost {
  const lane: SessionHost = {
    session: { ...main.session },
    roles: main.roles,
    get simServer() {
      return main.simServer;
    },
    startModelServer: () => main.startModelServer(),
    gateway: main.gateway,
    cache: main.cache,
    caseBudget: null,
    outDir: null,
    quiet: true,
    sink: null,
    caseSink: null,
    suiteLoaded: null,
    async close() {
      if (currentHost() === lane) installHost(undefined);
    },
  };
  return lane;
}
