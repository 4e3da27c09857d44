/**
 * A suite's `mcp` option (docs/agents.md#mcp): which MCP servers give the target tools, which of their
 * tools are offered, how their traffic is cached, and the per-case setup. Checked once when the suite is
 * defined (a one-line error naming the key), resolved against the environment when a server starts.
 *
 * Secrets never sit in the suite file: an `env` value of a stdio server and a `headers` value of an HTTP
 * server name an environment variable, read when the server starts; the values are masked in every text
 * that comes back from the server (results, errors, its stderr) and never enter a cache key.
 */
import { SkillOptError } from '../util/errors.ts';
import { isPlainObject } from '../util/objects.ts';
import { MIN_SECRET_LENGTH } from '../util/redact.ts';
import type { SkillTask } from '../types.ts';
import type { McpClients } from './client.ts';
import { currentEnv } from '../util/io-context.ts';

export type McpScope = 'suite' | 'case';

interface ServerCommon {
  /**
   * `suite` (default): started once per suite and worker when the suite runs (afresh for each run: an
   * optimize run's rollouts never share a server's state), shared by its cases. `case`: started for each
   * case (each trial) and stopped after it, for a stateful server whose state must not leak between cases.
   */
  scope?: McpScope;
  /** How long starting (spawn, `initialize`, `tools/list`) may take (default 30 000 ms). */
  startTimeoutMs?: number;
  /** Overrides the suite's `mcp.cache` for this server. */
  cache?: McpCacheMode;
}

/** A server started as a child process, spoken to over stdio. */
export interface McpStdioServer extends ServerCommon {
  command: string;
  /** `${workspace}` in an argument is the case's workspace folder (scope `case` with `mcp.workspace`). */
  args?: string[];
  /**
   * Variables of the server's environment. A string names the environment variable whose value it gets
   * (`{ API_KEY: 'MY_SERVICE_KEY' }`: secrets stay out of the suite file); `{ value }` is a plain value that
   * is no secret (`{ MEMORY_FILE_PATH: { value: '${workspace}/memory.jsonl' } }`).
   */
  env?: Record<string, string | { value: string }>;
  /** The server's working directory (default: the project root); `${workspace}` allowed as in `args`. */
  cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServer extends ServerCommon {
  url: string;
  /** Request headers, as `env`: a string names the environment variable holding the value (`{ Authorization: 'MY_TOKEN' }`), `{ value }` is plain. */
  headers?: Record<string, string | { value: string }>;
}

export type McpServerConfig = McpStdioServer | McpHttpServer;

/**
 * How a server's `tools/call` results are cached (docs/cache.md#mcp-servers):
 * - `record` (default): calls go to the server (tools may have side effects) and each result is recorded
 *   under the case, its trial, its calls so far, the tool, its arguments and the tool list's hash, so
 *   `--model-cache replay` replays the case with no server;
 * - `rw`: for read-only servers: a result recorded for the same tool and arguments (and tool list) is
 *   served from the cache, whatever the case.
 */
export type McpCacheMode = 'record' | 'rw';
export const MCP_CACHE_MODES: readonly McpCacheMode[] = ['record', 'rw'];

export interface McpSetupContext {
  /** The case's workspace folder (`mcp.workspace`), else null. */
  workspace: string | null;
  /** The trial index (env.trials > 1), else undefined. */
  trial: number | undefined;
}

export interface McpOptions<E = unknown> {
  servers: Record<string, McpServerConfig>;
  /**
   * Which tools are offered: names (`read_file`) or `server/tool` (`fs/read_file`, `fs/*`). `allow`: only
   * these; `deny`: not these (it wins). A name that matches no listed tool is an error.
   */
  tools?: { allow?: string[]; deny?: string[] };
  /** `record` (default) or `rw`; see McpCacheMode. */
  cache?: McpCacheMode;
  /**
   * A folder per case (and trial) at a stable path under the run's output folder,
   * `<out>/mcp-workspaces/<suite>/<case id>[.t<trial>]`, emptied before the case: `${workspace}` in a
   * case-scoped server's `args`/`cwd`. Where a tool result names a path inside it, the model reads it
   * relative to the workspace (`.` for the folder itself), so a run in another output folder sends the same requests.
   */
  workspace?: boolean;
  /** Seed a case before it runs (write its files, create entities): through the clients, or on disk in `ctx.workspace`. */
  setup?: (task: SkillTask<E>, mcp: McpClients, ctx: McpSetupContext) => void | Promise<void>;
}

export const WORKSPACE_VAR = '${workspace}';
const SERVER_NAME_RE = /^[A-Za-z0-9_-]{1,32}$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const isHttp = (s: McpServerConfig): s is McpHttpServer => 'url' in s;

const DEFAULT_START_TIMEOUT_MS = 30_000;

/** A server's settings, checked, with its defaults filled in. */
export interface CheckedServer {
  name: string;
  config: McpServerConfig;
  scope: McpScope;
  cache: McpCacheMode;
  startTimeoutMs: number;
  /** `${workspace}` appears in its args, cwd or url. */
  usesWorkspace: boolean;
}

export interface CheckedMcp<E = unknown> {
  servers: CheckedServer[];
  allow: string[] | null;
  deny: string[];
  workspace: boolean;
  setup: McpOptions<E>['setup'] | null;
}

function fail(suite: string, key: string, why: string): never {
  throw new SkillOptError(`suite '${suite}': mcp.${key} ${why}`);
}

const stringList = (suite: string, key: string, v: unknown): string[] => {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    fail(suite, key, `must be a list of strings, got ${JSON.stringify(v)}`);
  return v as string[];
};

/** `env` / `headers`: each value names an environment variable, or is `{ value }`; true when a plain value uses `${workspace}`. */
function envNames(suite: string, key: string, v: unknown): boolean {
  if (v === undefined) return false;
  if (!isPlainObject(v)) fail(suite, key, 'must be an object of NAME: ENVIRONMENT_VARIABLE (or NAME: { value })');
  let workspace = false;
  for (const [k, name] of Object.entries(v)) {
    if (isPlainObject(name) && Object.keys(name).length === 1 && typeof name.value === 'string') {
      workspace ||= name.value.includes(WORKSPACE_VAR);
      continue;
    }
    if (typeof name !== 'string' || !ENV_NAME_RE.test(name)) {
      fail(
        suite,
        `${key}.${k}`,
        `must name an environment variable (its value is read when the server starts; secrets are never written in a suite file) or be { value: '…' } for a value that is no secret, got ${JSON.stringify(name)}`,
      );
    }
  }
  return workspace;
}

/** The suite's `mcp` option checked (a one-line error naming the key), with its defaults. */
export function checkMcpOptions<E>(suite: string, mcp: unknown): CheckedMcp<E> {
  if (!isPlainObject(mcp)) fail(suite, '', 'must be an object { servers, tools?, cache?, workspace?, setup? }');
  const known = ['servers', 'tools', 'cache', 'workspace', 'setup'];
  const extra = Object.keys(mcp).find((k) => !known.includes(k));
  if (extra) fail(suite, extra, `is not an option (the options are ${known.join(', ')})`);
  const cache = (mcp.cache ?? 'record') as McpCacheMode;
  if (!MCP_CACHE_MODES.includes(cache))
    fail(
      suite,
      'cache',
      `must be ${MCP_CACHE_MODES.map((m) => `'${m}'`).join(' or ')}, got ${JSON.stringify(mcp.cache)}`,
    );
  const workspace = mcp.workspace ?? false;
  if (typeof workspace !== 'boolean')
    fail(suite, 'workspace', `must be true or false, got ${JSON.stringify(workspace)}`);
  if (mcp.setup !== undefined && typeof mcp.setup !== 'function')
    fail(suite, 'setup', 'must be a function (task, mcp, ctx) => …');
  if (!isPlainObject(mcp.servers) || Object.keys(mcp.servers).length === 0)
    fail(suite, 'servers', 'must name at least one server: { name: { command, args? } | { url } }');
  const servers: CheckedServer[] = [];
  for (const [name, raw] of Object.entries(mcp.servers)) {
    const key = `servers.${name}`;
    if (!SERVER_NAME_RE.test(name)) fail(suite, key, 'is not a server name: 1-32 letters, digits, _ or -');
    if (!isPlainObject(raw))
      fail(suite, key, 'must be { command, args?, env?, cwd?, scope? } or { url, headers?, scope? }');
    const http = 'url' in raw;
    if (http === 'command' in raw)
      fail(suite, key, 'must have exactly one of `command` (stdio) and `url` (Streamable HTTP)');
    const allowed = http
      ? ['url', 'headers', 'scope', 'startTimeoutMs', 'cache']
      : ['command', 'args', 'env', 'cwd', 'scope', 'startTimeoutMs', 'cache'];
    const bad = Object.keys(raw).find((k) => !allowed.includes(k));
    if (bad)
      fail(
        suite,
        `${key}.${bad}`,
        `is not an option of ${http ? 'an HTTP' : 'a stdio'} server (its options are ${allowed.join(', ')})`,
      );
    let usesWorkspace = false;
    if (http) {
      if (typeof raw.url !== 'string' || !/^https?:\/\//.test(raw.url))
        fail(suite, `${key}.url`, `must be an http(s) URL, got ${JSON.stringify(raw.url)}`);
      usesWorkspace = envNames(suite, `${key}.headers`, raw.headers) || raw.url.includes(WORKSPACE_VAR);
    } else {
      if (typeof raw.command !== 'string' || raw.command.trim() === '')
        fail(suite, `${key}.command`, `must be a command, got ${JSON.stringify(raw.command)}`);
      const args = raw.args === undefined ? [] : stringList(suite, `${key}.args`, raw.args);
      if (raw.cwd !== undefined && typeof raw.cwd !== 'string')
        fail(suite, `${key}.cwd`, `must be a folder, got ${JSON.stringify(raw.cwd)}`);
      usesWorkspace =
        envNames(suite, `${key}.env`, raw.env) ||
        args.some((a) => a.includes(WORKSPACE_VAR)) ||
        (typeof raw.cwd === 'string' && raw.cwd.includes(WORKSPACE_VAR));
    }
    const scope = (raw.scope ?? 'suite') as McpScope;
    if (scope !== 'suite' && scope !== 'case')
      fail(suite, `${key}.scope`, `must be 'suite' or 'case', got ${JSON.stringify(raw.scope)}`);
    const serverCache = (raw.cache ?? cache) as McpCacheMode;
    if (!MCP_CACHE_MODES.includes(serverCache))
      fail(
        suite,
        `${key}.cache`,
        `must be ${MCP_CACHE_MODES.map((m) => `'${m}'`).join(' or ')}, got ${JSON.stringify(raw.cache)}`,
      );
    const startTimeoutMs = raw.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    if (typeof startTimeoutMs !== 'number' || !Number.isInteger(startTimeoutMs) || startTimeoutMs < 1)
      fail(suite, `${key}.startTimeoutMs`, `must be a positive integer, got ${JSON.stringify(startTimeoutMs)}`);
    if (usesWorkspace && (scope !== 'case' || !workspace)) {
      fail(
        suite,
        key,
        `uses ${WORKSPACE_VAR}, which is a case's folder: give the server scope: 'case' and the suite mcp.workspace: true`,
      );
    }
    servers.push({
      name,
      config: raw as unknown as McpServerConfig,
      scope,
      cache: serverCache,
      startTimeoutMs,
      usesWorkspace,
    });
  }
  const tools = mcp.tools;
  if (tools !== undefined && !isPlainObject(tools)) fail(suite, 'tools', 'must be { allow?, deny? }');
  const badTools = tools ? Object.keys(tools).find((k) => k !== 'allow' && k !== 'deny') : undefined;
  if (badTools) fail(suite, `tools.${badTools}`, 'is not an option (the options are allow, deny)');
  const allow = tools?.allow === undefined ? null : stringList(suite, 'tools.allow', tools.allow);
  const deny = tools?.deny === undefined ? [] : stringList(suite, 'tools.deny', tools.deny);
  for (const [list, entries] of [
    ['allow', allow ?? []],
    ['deny', deny],
  ] as const) {
    for (const entry of entries) {
      const slash = entry.indexOf('/');
      if (slash >= 0 && !servers.some((s) => s.name === entry.slice(0, slash))) {
        fail(
          suite,
          `tools.${list}`,
          `names '${entry}', but there is no server '${entry.slice(0, slash)}' (the servers are ${servers.map((s) => s.name).join(', ')})`,
        );
      }
    }
  }
  return { servers, allow, deny, workspace, setup: (mcp.setup as McpOptions<E>['setup']) ?? null };
}

/**
 * A server's settings as started: `${workspace}` replaced, env and header values read from the environment
 * variables they name. A variable that is not set is an error naming it.
 */
export interface ResolvedServer {
  name: string;
  transport:
    | { kind: 'stdio'; command: string; args: string[]; cwd: string | undefined; env: Record<string, string> }
    | { kind: 'http'; url: string; headers: Record<string, string> };
  /** The secret values (env and header values), masked in every text that comes back. */
  secrets: string[];
  /** The command line or URL, for errors (no secret in it). */
  label: string;
}

export function resolveServer(
  s: CheckedServer,
  workspace: string | null,
  env: NodeJS.ProcessEnv = currentEnv(),
): ResolvedServer {
  const fill = (text: string): string => (workspace === null ? text : text.split(WORKSPACE_VAR).join(workspace));
  const secrets: string[] = [];
  const read = (key: string, names: Record<string, string | { value: string }> | undefined): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [k, name] of Object.entries(names ?? {})) {
      if (typeof name !== 'string') {
        out[k] = fill(name.value);
        continue;
      }
      const value = env[name];
      if (value === undefined)
        throw new SkillOptError(
          `MCP server '${s.name}': ${key}.${k} names the environment variable ${name}, which is not set`,
        );
      out[k] = value;
      // short values (a flag, a port) would mask every occurrence of a common string; no secret is that short
      if (value.length >= MIN_SECRET_LENGTH) secrets.push(value);
    }
    return out;
  };
  if (isHttp(s.config)) {
    const url = fill(s.config.url);
    return {
      name: s.name,
      transport: { kind: 'http', url, headers: read('headers', s.config.headers) },
      secrets,
      label: url,
    };
  }
  const args = (s.config.args ?? []).map(fill);
  const cwd = s.config.cwd === undefined ? undefined : fill(s.config.cwd);
  const label = [s.config.command, ...args].map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(' ');
  return {
    name: s.name,
    transport: { kind: 'stdio', command: s.config.command, args, cwd, env: read('env', s.config.env) },
    secrets,
    label,
  };
}

/** `text` with every secret value replaced by `***`. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s && out.includes(s)) out = out.split(s).join('***');
  return out;
}
