/**
 * Where two trajectories of one case part ways (docs/agents.md): each is read as a list of events — each
 * call (name, arguments), each result (name, ok), the final answer — and the first event that differs is
 * the divergence, with what each side did there (null: that side had already ended).
 */
import type { TrajectoryStep } from '../types.ts';
import { clip, oneLineClip } from '../util/clip.ts';

export type TrajectoryEvent = {
  /** The 1-based model turn of the event. */
  turn: number;
  kind: 'call' | 'result' | 'answer';
  /** call, result: the tool. */
  name?: string;
  /** call: the arguments. */
  args?: unknown;
  /** result: whether the call succeeded. */
  ok?: boolean;
  /** answer: the text (clipped); result: the first characters of its content. */
  text?: string;
};

export type TrajectoryDivergence = {
  /** The 1-based index of the first event that differs. */
  event: number;
  baseline: TrajectoryEvent | null;
  candidate: TrajectoryEvent | null;
};

const TEXT_CLIP = 200;

export function trajectoryEvents(steps: TrajectoryStep[]): TrajectoryEvent[] {
  const out: TrajectoryEvent[] = [];
  for (const s of steps) {
    if (s.kind === 'assistant') {
      if (s.tool_calls?.length)
        for (const c of s.tool_calls) out.push({ turn: s.turn, kind: 'call', name: c.name, args: c.args });
      else out.push({ turn: s.turn, kind: 'answer', text: clip(s.content ?? '', TEXT_CLIP) });
    } else if (s.result) {
      out.push({
        turn: s.turn,
        kind: 'result',
        name: s.result.name,
        ok: s.result.ok,
        text: clip(s.result.content, TEXT_CLIP),
      });
    }
  }
  return out;
}

/** Order-insensitive over object keys, exact otherwise. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) => Object.hasOwn(b, k) && sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}

function sameEvent(a: TrajectoryEvent, b: TrajectoryEvent): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'call') return a.name === b.name && sameValue(a.args, b.args);
  if (a.kind === 'result') return a.name === b.name && a.ok === b.ok;
  return (a.text ?? '').trim() === (b.text ?? '').trim();
}

/** The first event at which the two trajectories differ; null when they are the same call for call. */
export function firstDivergence(baseline: TrajectoryStep[], candidate: TrajectoryStep[]): TrajectoryDivergence | null {
  const a = trajectoryEvents(baseline);
  const b = trajectoryEvents(candidate);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x && y && sameEvent(x, y)) continue;
    return { event: i + 1, baseline: x ?? null, candidate: y ?? null };
  }
  return null;
}

/**
 * One line for a divergent event: `turn 2 call run_command {"cmd":"…"}`, `turn 3 answer "…"`, `(ended)`.
 * The tool name and the arguments are the model's: their control characters are shown (`\x1b`).
 */
export function eventText(e: TrajectoryEvent | null, max = 120): string {
  if (!e) return '(ended)';
  if (e.kind === 'call')
    return oneLineClip(`turn ${e.turn} call ${e.name} ${e.args === undefined ? '{}' : JSON.stringify(e.args)}`, max);
  if (e.kind === 'result') return oneLineClip(`turn ${e.turn} result ${e.name} ${e.ok ? 'ok' : 'error'}`, max);
  return oneLineClip(`turn ${e.turn} answer ${JSON.stringify(e.text ?? '')}`, max);
}
