/**
 * MCP tools as the model is offered them (docs/agents.md#mcp), and their results as it reads them.
 *
 * Names. The model calls a function by a name OpenAI accepts, `^[a-zA-Z0-9_-]{1,64}$`. A tool is offered
 * under its own name when that name fits and no other offered tool (of another server, or the suite's own
 * `tool()`s, or `load_skill`) has it; otherwise under `<server>_<tool>` for every server that lists it
 * (characters that do not fit become `_`, cut to 64), and if that still clashes, with a short hash of
 * `server/tool` at the end. `server/tool` is the scorers' notation for a tool whatever name it is offered
 * under. The input schema is passed through as the server gave it.
 *
 * Results. Text content is the text; an image or audio item is a placeholder with its type and size
 * (`[image: image/png, 10240 bytes]`); an embedded resource is its text (or a placeholder for binary
 * content), a resource link its URI; a result with no content but structured content is that JSON. An
 * `isError` result goes back to the model as a tool error, like a `ToolError`: `error: <text>`.
 */
import { createHash } from 'node:crypto';
import type { ToolSpec } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';
import { oneLineClip } from '../util/clip.ts';
import type { CallResult, ListedTool } from './live.ts';

/** One MCP tool offered to the model. */
export interface OfferedTool {
  /** The function name the model calls. */
  offered: string;
  server: string;
  /** The tool's name on its server. */
  tool: string;
  spec: ToolSpec;
}

const NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;
const fit = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || '_';

/** Whether `entry` (`tool`, `server/tool`, `server/*`) names tool `tool` of `server`. */
export function namesTool(entry: string, server: string, tool: string): boolean {
  const slash = entry.indexOf('/');
  if (slash < 0) return entry === tool;
  const s = entry.slice(0, slash);
  const t = entry.slice(slash + 1);
  return s === server && (t === '*' || t === tool);
}

/**
 * The tools offered for these listings: filtered by `allow`/`deny` (an entry that names no listed tool is an
 * error naming it), named as the module comment says, in server order then listing order.
 */
export function offerTools(
  suite: string,
  listings: ReadonlyArray<{ server: string; tools: readonly ListedTool[] }>,
  o: { allow: readonly string[] | null; deny: readonly string[]; reserved: readonly string[] },
): OfferedTool[] {
  for (const [key, entries] of [
    ['allow', o.allow ?? []],
    ['deny', o.deny],
  ] as const) {
    for (const entry of entries) {
      if (!listings.some((l) => l.tools.some((t) => namesTool(entry, l.server, t.name)))) {
        // tool names come from the servers: escaped (and clipped) like any text from outside
        const listed = oneLineClip(
          listings.map((l) => `${l.server}: ${l.tools.map((t) => t.name).join(', ') || '(none)'}`).join('; '),
          400,
        );
        throw new SkillOptError(
          `suite '${suite}': mcp.tools.${key} names '${entry}', which no server lists (${listed})`,
        );
      }
    }
  }
  const kept = listings.flatMap((l) =>
    l.tools
      .filter(
        (t) =>
          (o.allow === null || o.allow.some((e) => namesTool(e, l.server, t.name))) &&
          !o.deny.some((e) => namesTool(e, l.server, t.name)),
      )
      .map((t) => ({ server: l.server, listed: t })),
  );
  const counts = new Map<string, number>();
  for (const k of kept) counts.set(fit(k.listed.name), (counts.get(fit(k.listed.name)) ?? 0) + 1);
  const taken = new Set(o.reserved);
  const out: OfferedTool[] = [];
  for (const k of kept) {
    const own = fit(k.listed.name);
    let name =
      own === k.listed.name && NAME_RE.test(own) && counts.get(own) === 1 && !taken.has(own)
        ? own
        : fit(`${k.server}_${k.listed.name}`);
    if (taken.has(name)) {
      const tag = createHash('sha256').update(`${k.server}/${k.listed.name}`).digest('hex').slice(0, 8);
      name = `${name.slice(0, 64 - 9)}_${tag}`;
    }
    taken.add(name);
    out.push({
      offered: name,
      server: k.server,
      tool: k.listed.name,
      spec: {
        name,
        description: k.listed.description ?? (typeof k.listed.title === 'string' ? k.listed.title : ''),
        parameters: k.listed.inputSchema ?? { type: 'object' },
      },
    });
  }
  return out;
}

/** Bytes of base64 data. */
function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const clean = data.replace(/\s+/g, '');
  const pad = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - pad);
}

function itemText(item: Record<string, unknown>): string {
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string' ? item.text : '';
    case 'image':
    case 'audio':
      return `[${item.type}: ${typeof item.mimeType === 'string' ? item.mimeType : 'unknown type'}, ${base64Bytes(item.data)} bytes]`;
    case 'resource_link':
      return `[resource: ${String(item.uri)}${typeof item.name === 'string' ? ` (${item.name})` : ''}]`;
    case 'resource': {
      const r = (item.resource ?? {}) as Record<string, unknown>;
      if (typeof r.text === 'string') return r.text;
      return `[resource: ${String(r.uri)}, ${typeof r.mimeType === 'string' ? r.mimeType : 'unknown type'}, ${base64Bytes(r.blob)} bytes]`;
    }
    default:
      return JSON.stringify(item);
  }
}

/** A `tools/call` result as the model reads it (see the module comment). */
export function resultAsText(result: CallResult): { ok: boolean; content: string } {
  const items = Array.isArray(result.content) ? result.content : [];
  let text = items.map(itemText).join('\n');
  if (items.length === 0 && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  return result.isError === true ? { ok: false, content: `error: ${text}` } : { ok: true, content: text };
}

/** A listing's identity: the SHA-256 of the tools as listed (names, descriptions, schemas, everything given). */
export function toolListHash(tools: readonly ListedTool[]): string {
  return createHash('sha256').update(JSON.stringify(tools)).digest('hex');
}
