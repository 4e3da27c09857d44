/**
 * Recording and replaying a suite's MCP traffic in the model-call cache (docs/cache.md#mcp-servers).
 *
 * Entries (kind `mcp`, counted under role `mcp`, stage the server's name) and what each is keyed by:
 * - the tool list of a server, by suite and server: the last listing a live server gave;
 * - a case's session of a server, by suite, server, case and trial: the hash of the tool list the case ran
 *   against, so a replay whose recorded tool list has changed since names the server instead of missing
 *   somewhere later;
 * - a request of a case (`tools/call`, `resources/read`, …), by suite, case, trial, the case's MCP requests
 *   so far (their number and a hash of them, every server's), the server, the method and its parameters,
 *   and the server's tool list hash: a stateful server answers the same call differently before and after a
 *   write, and a case replays exactly the sequence it recorded;
 * - with `cache: rw` (read-only servers), a `tools/call` by suite, server, tool, arguments and tool list
 *   hash only, so the same call of any case is answered from the cache;
 * - a suite-level read (the skill under test from a server's resources), by suite, server, method and its
 *   parameters.
 *
 * No key holds a secret: the server's name stands for it, not its command line, environment or headers.
 */
import { createHash } from 'node:crypto';
import { mcpKey } from '../model/cache/key.ts';
import type { CacheMode } from '../model/cache/settings.ts';
import { CACHE_MISS_ERROR } from '../model/cache/cache.ts';
import { SkillOptError } from '../util/errors.ts';

/** Bumped when the material or a recorded value changes shape: old records then simply miss. */
const RECORD_VERSION = 1;

/** Where records go: the session's model-call cache (the suite runtime's port), in the run's cache mode. */
export interface McpRecorder {
  mode: CacheMode;
  /** The cache folder, for errors. */
  dir: string;
  recall(stage: string, key: string): Promise<{ value: Record<string, unknown> } | { miss: true; corrupt?: string }>;
  record(stage: string, key: string, value: Record<string, unknown>): void;
}

/** A request of a case, as the sequence of its calls so far holds it. */
export interface McpRequest {
  server: string;
  method: string;
  params: unknown;
}

export const toolListKey = (suite: string, server: string): string =>
  mcpKey({ v: RECORD_VERSION, record: 'tools/list', suite, server });

export const caseSessionKey = (suite: string, server: string, id: string, trial: number | undefined): string =>
  mcpKey({ v: RECORD_VERSION, record: 'session', suite, server, case: id, trial: trial ?? null });

export function caseRequestKey(c: {
  suite: string;
  id: string;
  trial: number | undefined;
  before: readonly McpRequest[];
  request: McpRequest;
  tools: string;
}): string {
  const before = createHash('sha256').update(JSON.stringify(c.before)).digest('hex');
  return mcpKey({
    v: RECORD_VERSION,
    record: 'request',
    suite: c.suite,
    case: c.id,
    trial: c.trial ?? null,
    n: c.before.length,
    before,
    ...c.request,
    tools: c.tools,
  });
}

export const sharedCallKey = (suite: string, request: McpRequest, tools: string): string =>
  mcpKey({ v: RECORD_VERSION, record: 'shared', suite, ...request, tools });

export const suiteReadKey = (suite: string, request: McpRequest): string =>
  mcpKey({ v: RECORD_VERSION, record: 'suite', suite, ...request });

/**
 * A replay that has no record for what a case asks of a server: the case is errored (`cache_miss`), never
 * scored, as a model call's miss is (its name is the cache's miss error's).
 */
export class McpReplayMiss extends SkillOptError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
    this.name = CACHE_MISS_ERROR;
  }
}

/** The miss error: what was asked of which server, and why nothing answers it. */
export function replayMiss(server: string, what: string, dir: string, corrupt?: string): McpReplayMiss {
  return new McpReplayMiss(
    `no recorded reply of MCP server '${server}' for ${what} in ${dir}${corrupt ? ` (its entry is corrupt: ${corrupt})` : ''}; --model-cache replay starts no MCP server`,
  );
}
