/**
 * A case's trajectory (docs/agents.md) as the reports show it: a compact form embedded in report.html (the
 * timeline a click on a case opens) and a text timeline for `skillopt show <dir> --case ID`.
 */
import pc from 'picocolors';
import type { TrajectoryStep } from '../types.ts';
import { oneLineClip } from '../util/clip.ts';
import { escapeControls } from '../util/control-chars.ts';

/** A tool result's text in report.html: at most this many characters (the record keeps up to 4 kB). */
export const RESULT_EMBED_CHARS = 2_000;
/** An assistant turn's text in report.html. */
export const CONTENT_EMBED_CHARS = 2_000;

/** A record's results are clipped to this many bytes (docs/agents.md). */
const RECORD_CLIP = 4_096;

/**
 * Whether a result's content ends with the record's clip marker (results over 4 kB are clipped when the
 * record is written, with a marker giving the full length): a bracketed note at the end that says clipped
 * or truncated, or, on a result of about 4 kB, one that gives a length in chars, characters or bytes.
 */
export function hasClipMarker(content: string): boolean {
  const tail = content.slice(-200);
  if (/[[(][^[\]()]*\b(?:clipped|truncated)\b[^[\]()]*[\])]\s*$/i.test(tail)) return true;
  return (
    content.length >= RECORD_CLIP - 200 &&
    /[[(][^[\]()]*\d[\d,_ ]*\s*(?:chars|characters|bytes)\b[^[\]()]*[\])]\s*$/i.test(tail)
  );
}

/** One embedded step: turn, kind, text, calls as [id, name, args as JSON text], result as [name, ok, content, ms, clipped]. */
export interface EmbeddedStep {
  t: number;
  k: 'assistant' | 'tool';
  c?: string;
  calls?: Array<[string, string, string]>;
  r?: [string, boolean, string, number, 0 | 1];
}

const argsText = (args: unknown): string => (typeof args === 'string' ? args : (JSON.stringify(args) ?? 'undefined'));

function cut(text: string, max: number): { text: string; cut: boolean } {
  return text.length > max ? { text: `${text.slice(0, max)}…`, cut: true } : { text, cut: false };
}

/** The compact form report.html embeds (texts cut to the embed sizes; a cut or clipped result is marked). */
export function embedTrajectory(steps: TrajectoryStep[]): EmbeddedStep[] {
  return steps.map((s) => {
    const e: EmbeddedStep = { t: s.turn, k: s.kind };
    if (s.content) e.c = cut(s.content, CONTENT_EMBED_CHARS).text;
    if (s.tool_calls?.length) e.calls = s.tool_calls.map((c) => [c.id, c.name, argsText(c.args)]);
    if (s.result) {
      const r = cut(s.result.content ?? '', RESULT_EMBED_CHARS);
      e.r = [s.result.name, s.result.ok, r.text, s.result.ms, r.cut || hasClipMarker(s.result.content ?? '') ? 1 : 0];
    }
    return e;
  });
}

/** Size of an embedded trajectory in characters (for the report's budget). */
export function embeddedSize(steps: EmbeddedStep[]): number {
  let n = 0;
  for (const s of steps) {
    n += 24 + (s.c?.length ?? 0);
    for (const c of s.calls ?? []) n += 12 + c[0].length + c[1].length + c[2].length;
    if (s.r) n += 24 + s.r[0].length + s.r[2].length;
  }
  return n;
}

/** Multi-line text, indented, control characters shown escaped, at most `maxLines` lines of `width`. */
function block(text: string, indent: string, width: number, maxLines: number): string[] {
  const lines = escapeControls(text, { layout: true }).split('\n');
  const out = lines.slice(0, maxLines).map((l) => `${indent}${l.length > width ? `${l.slice(0, width - 1)}…` : l}`);
  if (lines.length > maxLines) out.push(pc.dim(`${indent}… ${lines.length - maxLines} more lines`));
  return out;
}

/**
 * The trajectory as a terminal timeline: per turn, the assistant's text, each call with its arguments, and
 * each result (ok or error, ms, its first lines, `clipped` when the record clipped it).
 */
export function trajectoryTimeline(
  steps: TrajectoryStep[],
  opts: { width?: number; resultLines?: number } = {},
): string[] {
  const width = Math.max(60, opts.width ?? 120);
  const resultLines = opts.resultLines ?? 6;
  const out: string[] = [];
  let turn = -1;
  for (const s of steps) {
    if (s.turn !== turn) {
      turn = s.turn;
      out.push(pc.bold(`    turn ${s.turn}`));
    }
    if (s.kind === 'assistant') {
      if (s.content && s.content.trim() !== '') {
        out.push(`      ${pc.cyan('assistant')}${s.tool_calls?.length ? '' : pc.dim(' (answer)')}`);
        out.push(...block(s.content.trim(), '        ', width - 8, 12));
      }
      for (const c of s.tool_calls ?? []) {
        // the tool name and the call id are the model's, an MCP server's tool name its server's: shown escaped like its answer
        const name = oneLineClip(c.name, 60);
        const origin = c.mcp ? ` ${pc.dim(`[${oneLineClip(`${c.mcp.server}/${c.mcp.tool}`, 80)}]`)}` : '';
        out.push(
          `      ${pc.yellow('→ call')} ${name}${origin} ${oneLineClip(argsText(c.args), width - 16 - name.length)}${pc.dim(`  (${oneLineClip(c.id, 60)})`)}`,
        );
      }
    } else if (s.result) {
      const r = s.result;
      const status = r.ok ? pc.green('ok') : pc.red('error');
      const clipped = hasClipMarker(r.content) ? pc.yellow(' · clipped') : '';
      out.push(
        `      ${pc.magenta('← result')} ${oneLineClip(r.name, 60)} ${status} ${pc.dim(`${r.ms} ms · ${r.content.length} chars`)}${clipped}`,
      );
      if (r.content.trim() !== '') out.push(...block(r.content.trimEnd(), '        ', width - 8, resultLines));
    }
  }
  return out;
}
