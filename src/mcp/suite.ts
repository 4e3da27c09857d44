/**
 * A suite's MCP servers over a run (docs/agents.md#mcp): their lifecycle, each case's view of them (the
 * tools offered to the model, the clients of the suite's own code) and the recording of every request.
 *
 * Lifecycle. `ready()` (called when the suite is defined and awaited before its first case) starts every
 * server of scope `suite` and keeps it for the suite's cases; a server of scope `case` is started once to
 * check that it starts and to read its tools, then once per case (each trial) and stopped after it. A
 * server that fails to start there is the suite's one-line load error (McpStartError). A suite-scoped
 * server that died during a case is started again for the next case. `close()` stops them all; the
 * reaper (reaper.ts) kills what a cancelled run leaves.
 *
 * Cache modes (docs/cache.md#mcp-servers). `replay`: no server is started; tool lists and every response
 * come from the records (record.ts), and a missing one is a replay miss naming the server. Otherwise the
 * servers answer (a server with `cache: rw` is asked only what has no record yet) and, in `rw`, every
 * response is recorded.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import type { SkillTask } from '../types.ts';
import type { RemoteTool } from '../agent/loop.ts';
import { SkillOptError } from '../util/errors.ts';
import { isPlainObject } from '../util/objects.ts';
import { resolveServer, type CheckedMcp, type CheckedServer } from './config.ts';
import { LiveServer, McpServerDied, type CallResult, type ListedTool } from './live.ts';
import { offerTools, resultAsText, toolListHash, type OfferedTool } from './tools.ts';
import {
  caseRequestKey,
  caseSessionKey,
  replayMiss,
  sharedCallKey,
  suiteReadKey,
  toolListKey,
  McpReplayMiss,
  type McpRecorder,
  type McpRequest,
} from './record.ts';
import {
  McpRequestError,
  type McpClient,
  type McpClients,
  type McpResourceContents,
  type McpToolResult,
} from './client.ts';

export interface McpSuiteOptions<E> {
  suite: string;
  checked: CheckedMcp<E>;
  /** The session's model-call cache; null when it is off. */
  recorder: McpRecorder | null;
  /** The run's output folder (workspaces go under it); null: a temp folder. */
  runDir: string | null;
  /** Names the model is offered besides MCP tools (the suite's own tools, `load_skill`). */
  reserved: readonly string[];
  /** The suite's toolTimeoutMs: a request of the suite's own code waits this long too. */
  toolTimeoutMs: number;
  env?: NodeJS.ProcessEnv;
}

/** A tool list as a case sees it. */
interface Listing {
  tools: ListedTool[];
  hash: string;
}

/** A `setup` that threw: a bug in the suite (the case is errored, like a tool handler's crash). */
export class McpSetupError extends Error {
  override name = 'McpSetupError';
  constructor(readonly thrown: unknown) {
    super(`mcp.setup threw: ${thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown)}`);
  }

  detail(): string {
    const stack = this.thrown instanceof Error && this.thrown.stack ? this.thrown.stack : '';
    return stack ? `${this.message}\n${stack}` : this.message;
  }
}

/** Every string of a JSON value passed through `f`. */
function mapStrings<T>(value: T, f: (s: string) => string): T {
  if (typeof value === 'string') return f(value) as T;
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f)) as T;
  if (isPlainObject(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)])) as T;
  return value;
}

export class McpSuite<E = unknown> {
  private readonly mode: McpRecorder['mode'];
  private readonly servers: CheckedServer[];
  /** Suite-scoped servers while they run. */
  private readonly running = new Map<string, Promise<LiveServer>>();
  /** Each server's tool list as last seen (live) or recorded (replay). */
  private readonly listings = new Map<string, Promise<Listing>>();
  /** The tool-list hash last recorded per server, so a listing is written only when it changed. */
  private readonly recordedHash = new Map<string, Promise<string | null>>();
  private readyPromise: Promise<void> | null = null;
  private closed = false;
  private readonly cases = new Set<McpCase>();

  constructor(private readonly o: McpSuiteOptions<E>) {
    this.mode = o.recorder?.mode ?? 'off';
    this.servers = o.checked.servers;
  }

  /** Whether no server is ever started (`--model-cache replay`). */
  get replaying(): boolean {
    return this.mode === 'replay';
  }

  /**
   * Start the suite-scoped servers and check that the case-scoped ones start, and that `mcp.tools` names
   * listed tools. Rejects with the first failure (a one-line SkillOptError). Memoized.
   */
  ready(): Promise<void> {
    this.readyPromise ??= (async () => {
      if (this.replaying) {
        // the recorded tool lists, when there are: a missing one is each case's replay miss, not the suite's
        const found = await Promise.all(
          this.servers.map((s) =>
            this.listing(s).then(
              (l) => ({ server: s.name, tools: l.tools }),
              () => null,
            ),
          ),
        );
        if (found.every((f) => f !== null)) offerTools(this.o.suite, found, this.offerOptions());
        return;
      }
      const listings = await Promise.all(
        this.servers.map(async (s) => {
          if (s.scope === 'suite') return { server: s.name, tools: (await this.listing(s)).tools };
          // a case-scoped server: started once here, so a server that cannot start fails the suite at once
          const probeDir = s.usesWorkspace ? this.workspace('.probe', undefined) : null;
          const probe = await this.start(s, probeDir);
          try {
            const listing = this.noteListing(s, probe, workspaceForms(probeDir));
            this.listings.set(s.name, Promise.resolve(listing));
            return { server: s.name, tools: listing.tools };
          } finally {
            await probe.close();
          }
        }),
      );
      offerTools(this.o.suite, listings, this.offerOptions());
    })();
    return this.readyPromise;
  }

  private offerOptions() {
    return { allow: this.o.checked.allow, deny: this.o.checked.deny, reserved: this.o.reserved };
  }

  private async start(s: CheckedServer, workspace: string | null): Promise<LiveServer> {
    if (this.closed)
      throw new SkillOptError(`suite '${this.o.suite}': MCP server '${s.name}' not started: the suite has ended`);
    return LiveServer.start(resolveServer(s, workspace, this.o.env), s.startTimeoutMs);
  }

  /** A suite-scoped server, started (again, when it died) as needed. */
  private server(s: CheckedServer): Promise<LiveServer> {
    let p = this.running.get(s.name);
    if (!p) {
      p = this.start(s, null);
      this.running.set(s.name, p);
      p.catch(() => this.running.delete(s.name));
    }
    return p;
  }

  /** A live server's tool list (masked, workspace paths relative), recorded in `rw` when it changed. */
  private noteListing(s: CheckedServer, server: LiveServer, workspace: readonly string[] = []): Listing {
    const tools = mapStrings(server.tools, (t) => relativize(server.mask(t), workspace));
    const listing = { tools, hash: toolListHash(tools) };
    const rec = this.o.recorder;
    if (rec && rec.mode === 'rw') {
      let last = this.recordedHash.get(s.name);
      if (!last) {
        last = rec.recall(s.name, toolListKey(this.o.suite, s.name)).then(
          (r) => ('value' in r && typeof r.value.hash === 'string' ? r.value.hash : null),
          () => null,
        );
        this.recordedHash.set(s.name, last);
      }
      const next = last.then((hash) => {
        if (hash !== listing.hash)
          rec.record(s.name, toolListKey(this.o.suite, s.name), { tools: listing.tools, hash: listing.hash });
        return listing.hash;
      });
      this.recordedHash.set(s.name, next);
    }
    return listing;
  }

  /** The tool list of a server: a suite-scoped server's (live), or the recorded one (replay). */
  private listing(s: CheckedServer): Promise<Listing> {
    let p = this.listings.get(s.name);
    if (!p) {
      if (this.replaying) {
        const rec = this.o.recorder!;
        p = rec.recall(s.name, toolListKey(this.o.suite, s.name)).then((r) => {
          if ('value' in r && Array.isArray(r.value.tools) && typeof r.value.hash === 'string')
            return { tools: r.value.tools as ListedTool[], hash: r.value.hash };
          throw replayMiss(s.name, 'tools/list', rec.dir, 'corrupt' in r ? r.corrupt : undefined);
        });
      } else {
        p = this.server(s).then((server) => this.noteListing(s, server));
      }
      this.listings.set(s.name, p);
      p.catch(() => {});
    }
    return p;
  }

  /** Without a run folder, workspaces go to a temp folder of the suite's, removed when it closes. */
  private tempRoot: string | null = null;

  /** `<run>/mcp-workspaces/<suite>/<id>[.t<trial>]`, emptied. */
  private workspace(id: string, trial: number | undefined): string {
    const root = this.o.runDir ?? (this.tempRoot ??= mkdtempSync(join(tmpdir(), 'skillopt-mcp-')));
    const dir = resolve(root, 'mcp-workspaces', this.o.suite, trial === undefined ? id : `${id}.t${trial}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /**
   * A case's view of the servers: its workspace, its servers (case-scoped ones started for it), the tools
   * offered, the clients, and `mcp.setup` run. Throws McpServerDied (infra) when a server cannot be had for
   * it, a replay miss naming the server, or McpSetupError.
   */
  async openCase(task: SkillTask<E>, trial: number | undefined, signal?: AbortSignal): Promise<McpCase> {
    await this.ready();
    if (this.closed) throw new SkillOptError(`suite '${this.o.suite}': the suite's MCP servers were stopped`);
    const workspace = this.o.checked.workspace ? this.workspace(task.id, trial) : null;
    const forms = workspaceForms(workspace);
    const c = new McpCase(this.o.suite, task.id, trial, workspace, forms, this.o.recorder, this.o.toolTimeoutMs);
    this.cases.add(c);
    try {
      for (const s of this.servers) {
        if (this.replaying) {
          const listing = await this.listing(s);
          await checkSession(this.o.recorder!, this.o.suite, s.name, task.id, trial, listing.hash);
          c.attach(s, null, listing);
        } else if (s.scope === 'case') {
          let server: LiveServer;
          try {
            server = await this.start(s, workspace);
          } catch (e) {
            throw new McpServerDied(
              `MCP server '${s.name}' did not start for case ${task.id}: ${e instanceof Error ? e.message.replace(/^MCP server '[^']*' (\([^)]*\) )?failed to start: /, '') : String(e)}`,
            );
          }
          c.attach(s, server, this.noteListing(s, server, forms), true);
        } else {
          const starting = this.server(s);
          let server = await starting.catch((e: unknown) => {
            throw new McpServerDied(
              `MCP server '${s.name}' could not be started again for case ${task.id}: ${e instanceof Error ? e.message : String(e)}`,
            );
          });
          if (server.dead) {
            // it died during an earlier case: started again for this one (once, whichever case gets here first)
            if (this.running.get(s.name) === starting) {
              this.running.delete(s.name);
              this.listings.delete(s.name);
              void server.close();
            }
            server = await this.server(s).catch((e: unknown) => {
              throw new McpServerDied(
                `MCP server '${s.name}' died and could not be started again for case ${task.id}: ${e instanceof Error ? e.message : String(e)}`,
              );
            });
          }
          c.attach(s, server, await this.listing(s));
        }
      }
      c.offer(offerTools(this.o.suite, c.listings(), this.offerOptions()));
      c.noteSessions();
      if (this.o.checked.setup) {
        try {
          await this.o.checked.setup(task, c.clients, { workspace, trial });
        } catch (e) {
          if (e instanceof McpServerDied || e instanceof McpReplayMiss || signal?.aborted) throw e;
          throw new McpSetupError(e);
        }
      }
      return c;
    } catch (e) {
      await this.closeCase(c);
      throw e;
    }
  }

  /** Stop the case's own servers. */
  async closeCase(c: McpCase): Promise<void> {
    this.cases.delete(c);
    await c.close();
  }

  /**
   * The skill under test from a server's resources (SEP-2640 layout, docs/agents.md#skills-from-mcp):
   * `skill://<skill-path>` or its `…/SKILL.md`. Recorded, so a replay reads it with no server.
   */
  async readSkill(serverName: string, uri: string): Promise<{ text: string; path: string }> {
    const s = this.servers.find((x) => x.name === serverName);
    if (!s)
      throw new SkillOptError(
        `suite '${this.o.suite}': skill.mcp names the server '${serverName}', which is not in mcp.servers (${this.servers.map((x) => x.name).join(', ')})`,
      );
    const skillUri = skillFileUri(uri);
    const path = `mcp:${serverName}:${skillUri}`;
    const key = suiteReadKey(this.o.suite, { server: serverName, method: 'resources/read', params: { uri: skillUri } });
    const rec = this.o.recorder;
    if (this.replaying) {
      const r = await rec!.recall(serverName, key);
      if ('value' in r && typeof r.value.text === 'string') return { text: r.value.text, path };
      const miss = replayMiss(serverName, `the skill ${skillUri}`, rec!.dir, 'corrupt' in r ? r.corrupt : undefined);
      throw new SkillOptError(`suite '${this.o.suite}': --model-cache replay: ${miss.message}`, { exitCode: 2 });
    }
    await this.ready();
    const server =
      s.scope === 'suite'
        ? await this.server(s)
        : await this.start(s, s.usesWorkspace ? this.workspace('.skill', undefined) : null);
    try {
      const { readServedSkill } = await import('./skill.ts');
      const text = await readServedSkill(server, skillUri, this.o.suite);
      if (rec?.mode === 'rw') rec.record(serverName, key, { text });
      return { text, path };
    } finally {
      if (s.scope === 'case') await server.close();
    }
  }

  /** Stop every server (the suite's and any case's still open). */
  async close(): Promise<void> {
    this.closed = true;
    const cases = [...this.cases];
    this.cases.clear();
    await Promise.all([
      ...cases.map((c) => c.close()),
      ...[...this.running.values()].map((p) =>
        p.then(
          (s) => s.close(),
          () => {},
        ),
      ),
    ]);
    this.running.clear();
    if (this.tempRoot) rmSync(this.tempRoot, { recursive: true, force: true });
  }
}

/** `skill://name` → `skill://name/SKILL.md` (a URI that names the file is kept). */
export function skillFileUri(uri: string): string {
  const u = uri.trim();
  return /\/SKILL\.md$/.test(u) ? u : `${u.replace(/\/+$/, '')}/SKILL.md`;
}

/** Replay: the tool list a case recorded must be the server's recorded one; a case never recorded misses. */
async function checkSession(
  rec: McpRecorder,
  suite: string,
  server: string,
  id: string,
  trial: number | undefined,
  hash: string,
): Promise<void> {
  const r = await rec.recall(server, caseSessionKey(suite, server, id, trial));
  if (!('value' in r))
    throw replayMiss(server, `case ${id}${trial === undefined ? '' : ` (trial ${trial})`}`, rec.dir, r.corrupt);
  if (r.value.tools !== hash) {
    throw new McpReplayMiss(
      `MCP server '${server}': its tool list changed since case ${id} was recorded (tool list sha256:${String(r.value.tools).slice(0, 12)}… then, sha256:${hash.slice(0, 12)}… now); record the suite again with --model-cache rw`,
    );
  }
}

/** The forms a workspace's path takes in a server's texts: as given and resolved (symlinks), longest first. */
export function workspaceForms(workspace: string | null): string[] {
  if (workspace === null) return [];
  const forms = new Set([workspace]);
  try {
    forms.add(realpathSync(workspace));
  } catch {
    // not there: the path as given is the only form
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Workspace paths inside `text` made relative to the workspace (`.` for the folder itself); `forms`: workspaceForms. */
export function relativize(text: string, forms: readonly string[]): string {
  let out = text;
  for (const ws of forms) if (out.includes(ws)) out = out.split(`${ws}/`).join('').split(ws).join('.');
  return out;
}

interface Attached {
  config: CheckedServer;
  server: LiveServer | null;
  listing: Listing;
  /** Started for this case: stopped with it. */
  own: boolean;
}

/** One case's servers, tools, clients and requests (in order, for the record keys). */
export class McpCase {
  private readonly attached = new Map<string, Attached>();
  private readonly requests: McpRequest[] = [];
  private offered: OfferedTool[] = [];
  readonly clients: McpClients = {};
  private closed = false;

  constructor(
    private readonly suite: string,
    private readonly id: string,
    private readonly trial: number | undefined,
    readonly workspace: string | null,
    private readonly workspacePaths: readonly string[],
    private readonly recorder: McpRecorder | null,
    private readonly timeoutMs: number,
  ) {}

  attach(config: CheckedServer, server: LiveServer | null, listing: Listing, own = false): void {
    this.attached.set(config.name, { config, server, listing, own });
    const c: McpClient = {
      server: config.name,
      tools: listing.tools,
      callTool: async (name, args = {}, opts = {}) => {
        const out = await this.callTool(config.name, name, args, {
          ...(opts.signal ? { signal: opts.signal } : {}),
          timeoutMs: this.timeoutMs,
        });
        if ('timeout' in out)
          throw new McpRequestError(
            `MCP server '${config.name}': tools/call ${name} timed out after ${out.timeout} ms (toolTimeoutMs)`,
          );
        if ('error' in out)
          throw new McpRequestError(`MCP server '${config.name}': tools/call ${name} failed: ${out.error}`);
        const shown = resultAsText(out.result);
        return { ...out.result, ok: shown.ok, text: shown.content } as McpToolResult;
      },
      readResource: async (uri, opts = {}) => {
        const out = await this.send(
          config.name,
          'resources/read',
          { uri },
          async (server) => ({ result: await server.readResource(uri, opts.signal) }),
          false,
          opts.signal,
        );
        if ('error' in out)
          throw new McpRequestError(`MCP server '${config.name}': resources/read ${uri} failed: ${String(out.error)}`);
        return out.result as McpResourceContents;
      },
    };
    this.clients[config.name] = c;
  }

  listings(): Array<{ server: string; tools: ListedTool[] }> {
    return [...this.attached.values()].map((a) => ({ server: a.config.name, tools: a.listing.tools }));
  }

  offer(tools: OfferedTool[]): void {
    this.offered = tools;
  }

  /** What the model is offered: `server/tool` by offered name. */
  get offeredTools(): readonly OfferedTool[] {
    return this.offered;
  }

  /** `rw`: which tool list this case runs against, per server (a replay checks it). */
  noteSessions(): void {
    if (this.recorder?.mode !== 'rw') return;
    for (const a of this.attached.values())
      this.recorder.record(a.config.name, caseSessionKey(this.suite, a.config.name, this.id, this.trial), {
        tools: a.listing.hash,
      });
  }

  /** The offered tools as the loop runs them. */
  remoteTools(): RemoteTool[] {
    return this.offered.map((t) => ({
      spec: t.spec,
      mcp: { server: t.server, tool: t.tool },
      call: async (argsText, o) => {
        let args: unknown;
        try {
          args = argsText.trim() === '' ? {} : JSON.parse(argsText);
        } catch (e) {
          return {
            ok: false,
            content: `error: the arguments of '${t.offered}' are not valid JSON (${(e as Error).message}): ${argsText.slice(0, 200)}`,
          };
        }
        if (!isPlainObject(args))
          return { ok: false, content: `error: the arguments of '${t.offered}' must be a JSON object` };
        const out = await this.callTool(t.server, t.tool, args, o);
        if ('timeout' in out)
          return { ok: false, content: `error: tool '${t.offered}' timed out after ${out.timeout} ms (toolTimeoutMs)` };
        if ('error' in out) return { ok: false, content: `error: ${out.error}` };
        return resultAsText(out.result);
      },
    }));
  }

  private callTool(
    server: string,
    name: string,
    args: Record<string, unknown>,
    o: { signal?: AbortSignal; timeoutMs: number },
  ): Promise<{ result: CallResult } | { timeout: number } | { error: string }> {
    return this.send(
      server,
      'tools/call',
      { name, arguments: args },
      (live) => timedCall(live, name, args, o),
      true,
      o.signal,
    ) as Promise<{ result: CallResult } | { timeout: number } | { error: string }>;
  }

  /**
   * One request of the case: from the record (replay, or a `cache: rw` server's hit), else from the server,
   * recorded in `rw`. The outcome is `{ result }`, `{ error }` (the server's error message) or `{ timeout }`.
   */
  private async send(
    serverName: string,
    method: string,
    params: Record<string, unknown>,
    ask: (server: LiveServer) => Promise<Record<string, unknown>>,
    shareable: boolean,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const a = this.attached.get(serverName);
    if (!a) throw new SkillOptError(`case ${this.id}: there is no MCP server '${serverName}'`);
    if (this.closed)
      throw new SkillOptError(`case ${this.id}: MCP server '${serverName}' was asked after the case ended`);
    const request: McpRequest = { server: serverName, method, params };
    const shared = shareable && a.config.cache === 'rw';
    const key = shared
      ? sharedCallKey(this.suite, request, a.listing.hash)
      : caseRequestKey({
          suite: this.suite,
          id: this.id,
          trial: this.trial,
          before: this.requests,
          request,
          tools: a.listing.hash,
        });
    this.requests.push(request);
    const n = this.requests.length;
    const rec = this.recorder;
    const what = () =>
      `${method} ${method === 'tools/call' ? String(params.name) : String(params.uri ?? '')} (request ${n} of case ${this.id}${this.trial === undefined ? '' : `, trial ${this.trial}`})`;
    if (rec && (rec.mode === 'replay' || (shared && rec.mode !== 'off'))) {
      const r = await rec.recall(serverName, key);
      if ('value' in r) return r.value;
      if (rec.mode === 'replay') throw replayMiss(serverName, what(), rec.dir, r.corrupt);
    }
    if (!a.server) throw replayMiss(serverName, what(), rec?.dir ?? '(no cache)');
    const server = a.server;
    let out: Record<string, unknown>;
    try {
      out = await ask(server);
    } catch (e) {
      // a server gone, or the case cancelled: not an answer of the server's
      if (e instanceof McpServerDied || signal?.aborted) throw e;
      out = { error: e instanceof Error ? e.message : String(e) };
    }
    out = mapStrings(out, (s) => relativize(server.mask(s), this.workspacePaths));
    if (rec?.mode === 'rw') rec.record(serverName, key, out);
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.attached.values()].filter((a) => a.own && a.server).map((a) => a.server!.close()));
  }
}

/** A live `tools/call` within `timeoutMs`: past it the request is cancelled and the outcome is a timeout. */
async function timedCall(
  server: LiveServer,
  name: string,
  args: Record<string, unknown>,
  o: { signal?: AbortSignal; timeoutMs: number },
): Promise<Record<string, unknown>> {
  const ctl = new AbortController();
  const outer = o.signal;
  const onAbort = () => ctl.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => r('timeout'), o.timeoutMs);
  });
  const call = server.callTool(name, args, ctl.signal, o.timeoutMs * 2 + 1000);
  call.catch(() => {});
  try {
    const first = await Promise.race([call, timedOut]);
    if (first === 'timeout') {
      ctl.abort(new Error('toolTimeoutMs'));
      return { timeout: o.timeoutMs };
    }
    return { result: first };
  } catch (e) {
    if (outer?.aborted) throw outer.reason ?? e;
    throw e;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}
