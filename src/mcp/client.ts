/**
 * The MCP clients a suite's own code gets (docs/agents.md#mcp): `mcp.setup(task, mcp)`, a `run` hook's
 * `ctx.mcp` and a scorer's `ctx.mcp`, one per server by name. Their requests are the case's, recorded and
 * replayed like the model's calls to the same tools, so a scorer that reads the final state through them
 * scores a replay with no server running.
 */

/** A tool as `tools/list` gives it (only the fields skillopt reads are typed; the rest is kept as given). */
export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  [key: string]: unknown;
}

/** A `tools/call` result as the server sent it. */
export interface CallResult {
  content?: Array<Record<string, unknown>>;
  structuredContent?: unknown;
  isError?: boolean;
  [key: string]: unknown;
}

/** A `tools/call` result as the server sent it, with the text the model would read. */
export interface McpToolResult extends CallResult {
  /** false for an `isError` result. */
  ok: boolean;
  /** The content as text (docs/agents.md#mcp: images and resources as placeholders); `error: …` when not ok. */
  text: string;
}

export interface McpResourceContents {
  contents: Array<{ uri: string; mimeType?: string; text?: string; blob?: string; [key: string]: unknown }>;
}

export interface McpClient {
  /** The server's name in the suite's `mcp.servers`. */
  readonly server: string;
  /** The tools the server lists, as it lists them. */
  readonly tools: readonly ListedTool[];
  /**
   * Call a tool by its own name on this server. An `isError` result is returned (`ok: false`); a JSON-RPC
   * error or a call past the suite's `toolTimeoutMs` throws McpRequestError; a server that went away throws
   * an infrastructure error (the case is errored).
   */
  callTool(name: string, args?: Record<string, unknown>, opts?: { signal?: AbortSignal }): Promise<McpToolResult>;
  readResource(uri: string, opts?: { signal?: AbortSignal }): Promise<McpResourceContents>;
}

/** A case's clients, by server name. */
export type McpClients = Record<string, McpClient>;

/** A request the server answered with an error (or did not answer in time): its message, the server's text. */
export class McpRequestError extends Error {
  override name = 'McpRequestError';
}
