/**
 * A live connection to one MCP server: the official SDK's `Client` over stdio (stdio.ts) or Streamable
 * HTTP, started with `initialize` and `tools/list` within the server's `startTimeoutMs`.
 *
 * - A server that does not come up is an McpStartError: one line with the command (or URL), how it ended
 *   and the tail of its stderr (secrets masked, control characters escaped), exit 2 (docs/agents.md#mcp).
 * - A server that goes away while a request waits (its process exits, the HTTP endpoint stops answering)
 *   makes that request an McpServerDied error, an infrastructure failure: the case is errored, never
 *   failed, and the suite starts the server again for its next case.
 * - Every other error of a request (a JSON-RPC error, an invalid result) is the server's answer, for the
 *   caller to turn into a tool error the model sees.
 *
 * The SDK is imported when the first server starts, so suites without MCP never load it.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SkillOptError } from '../util/errors.ts';
import { oneLineClip } from '../util/clip.ts';
import { maskSecrets, type ResolvedServer } from './config.ts';
import type { StdioTransport } from './stdio.ts';
import type { CallResult, ListedTool } from './client.ts';

export type { CallResult, ListedTool };

const CLIENT_INFO = { name: 'skillopt', version: '1' };
const STDERR_TAIL = 300;

/** A server that did not start: the suite's one-line load error. */
export class McpStartError extends SkillOptError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

/** The server went away during a request: the case is errored (infra), and the server is restarted for the next. */
export class McpServerDied extends Error {
  override name = 'McpServerDied';
}

/** Whether an error is a server that went away (also after crossing a worker boundary, which keeps the name). */
export function isMcpServerDied(e: unknown): boolean {
  return e instanceof Error && e.name === 'McpServerDied';
}

export class LiveServer {
  private closing = false;
  private lost = false;

  private constructor(
    readonly server: ResolvedServer,
    private readonly client: Client,
    private readonly stdio: StdioTransport | null,
    readonly tools: ListedTool[],
    readonly capabilities: Record<string, unknown>,
  ) {
    const prev = client.onclose;
    client.onclose = () => {
      prev?.();
      if (!this.closing) this.lost = true;
    };
  }

  /** Start the server: spawn or connect, `initialize`, then `tools/list` (every page). */
  static async start(server: ResolvedServer, timeoutMs: number): Promise<LiveServer> {
    const [{ Client }, { StdioTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('./stdio.ts'),
    ]);
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    let stdio: StdioTransport | null = null;
    const t = server.transport;
    const deadline = Date.now() + timeoutMs;
    const left = () => Math.max(1, deadline - Date.now());
    try {
      if (t.kind === 'stdio') {
        stdio = new StdioTransport({ command: t.command, args: t.args, cwd: t.cwd, env: t.env });
        await client.connect(stdio, { timeout: left() });
      } else {
        const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
        await client.connect(
          new StreamableHTTPClientTransport(new URL(t.url), { requestInit: { headers: t.headers } }),
          { timeout: left() },
        );
      }
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: left() });
        tools.push(...(page.tools as ListedTool[]));
        cursor = page.nextCursor;
      } while (cursor);
      return new LiveServer(
        server,
        client,
        stdio,
        tools,
        (client.getServerCapabilities() ?? {}) as Record<string, unknown>,
      );
    } catch (e) {
      const why = await startFailure(e, stdio, timeoutMs);
      await client.close().catch(() => {});
      await stdio?.close().catch(() => {});
      throw new McpStartError(
        `MCP server '${server.name}' (${serverLabel(server)}) failed to start: ${maskSecrets(why, server.secrets)}`,
      );
    }
  }

  /** The server is gone (its process exited, its connection closed) without being stopped. */
  get dead(): boolean {
    return this.lost;
  }

  /** Text from the server, made safe to keep: its secrets masked. */
  mask(text: string): string {
    return maskSecrets(text, this.server.secrets);
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<CallResult> {
    return (await this.request('tools/call', () =>
      this.client.callTool({ name, arguments: args }, undefined, { signal, timeout: timeoutMs }),
    )) as CallResult;
  }

  async readResource(uri: string, signal?: AbortSignal): Promise<{ contents: Array<Record<string, unknown>> }> {
    return (await this.request('resources/read', () =>
      this.client.readResource({ uri }, signal ? { signal } : {}),
    )) as { contents: Array<Record<string, unknown>> };
  }

  /** A request of a method the SDK has no helper for (`skills/get`); the result as sent. */
  async call(method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const { z } = await import('zod');
    return this.request(method, () =>
      this.client.request({ method, params }, z.looseObject({}), signal ? { signal } : {}),
    ) as Promise<Record<string, unknown>>;
  }

  private async request<T>(what: string, send: () => Promise<T>): Promise<T> {
    if (this.lost) throw this.died(what);
    try {
      return await send();
    } catch (e) {
      const gone = this.lost || closedConnection(e) ? 'closed the connection' : unreachable(e);
      if (gone !== null) {
        this.lost = true;
        throw this.died(what, gone);
      }
      throw e;
    }
  }

  private died(what: string, gone = 'closed the connection'): McpServerDied {
    const how = this.stdio?.ending ?? gone;
    const tail = this.stdio ? stderrTail(this.stdio.stderr) : '';
    return new McpServerDied(
      this.mask(`MCP server '${this.server.name}' ${how} during ${what}${tail ? `: ${tail}` : ''}`),
    );
  }

  /** Stop the server (its process: stdin closed, SIGTERM, SIGKILL). */
  async close(): Promise<void> {
    this.closing = true;
    await this.client.close().catch(() => {});
    await this.stdio?.close().catch(() => {});
  }
}

/** The SDK's error for a request that lost its connection (JSON-RPC code -32000, ConnectionClosed). */
function closedConnection(e: unknown): boolean {
  return e instanceof Error && (e as { code?: unknown }).code === -32000;
}

/**
 * An HTTP server that cannot be reached (the request failed below HTTP: refused, reset) or answered with a
 * server error: how, in a few words; null for any other error (the server's answer).
 */
function unreachable(e: unknown): string | null {
  if (!(e instanceof Error)) return null;
  if (e instanceof TypeError && /fetch failed/i.test(e.message)) {
    const code = (e.cause as { code?: unknown } | undefined)?.code;
    return `could not be reached (${typeof code === 'string' ? code : 'fetch failed'})`;
  }
  const status = (e as { code?: unknown }).code;
  if (e.message.startsWith('Streamable HTTP error') && typeof status === 'number' && status >= 500)
    return `answered HTTP ${status}`;
  return null;
}

function stderrTail(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat ? oneLineClip(flat.length > STDERR_TAIL ? `…${flat.slice(-STDERR_TAIL)}` : flat, STDERR_TAIL + 1) : '';
}

/** Why a start failed, in one line: the command, how the process ended, its stderr tail. */
async function startFailure(e: unknown, stdio: StdioTransport | null, timeoutMs: number): Promise<string> {
  const timedOut = e instanceof Error && (e as { code?: unknown }).code === -32001;
  if (stdio && !timedOut && stdio.ending === null) await stdio.settled(1000); // a write failed first: let the process report how it ended
  const message = e instanceof Error ? e.message : String(e);
  const what = stdio
    ? (stdio.ending ??
      (timedOut ? `did not answer initialize and tools/list within ${timeoutMs} ms (startTimeoutMs)` : message))
    : timedOut
      ? `did not answer within ${timeoutMs} ms (startTimeoutMs)`
      : message;
  const tail = stdio ? stderrTail(stdio.stderr) : '';
  return oneLineClip(`${what}${tail ? `; stderr: ${tail}` : ''}`, 600);
}

/** The command line or URL of a server, for messages. */
export function serverLabel(server: ResolvedServer): string {
  return oneLineClip(server.label, 200);
}
