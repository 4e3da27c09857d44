/** Numeric answers with a tolerance. */
import type { SkillTask } from '../../types.ts';
import { resolvePerTask, show, type PerTask } from './text.ts';
import { referenceScorer, ScorerError, type Scorer } from './types.ts';
import { checkOptions, OPTION_SCHEMAS } from './options.ts';

export interface NumericOptions<E = unknown> {
  /** Allowed error (default 0, i.e. equal up to floating-point noise). */
  tolerance?: number;
  /** When true the tolerance is a fraction of |expected| (0.01 = within 1%). */
  relative?: boolean;
  /** Which number of the answer is the answer: `last` (default, where worked solutions end) or `first`. */
  pick?: 'first' | 'last';
  /** Read `45%` as 0.45 (default false: the percent sign is ignored and `45%` reads 45). */
  percentAsFraction?: boolean;
  /** Overrides `task.expected` (a number or a numeric string). */
  expected?: PerTask<number | string, E>;
  name?: string;
}

/**
 * Numbers in a text: optional sign (also U+2212), thousands separators (`1,234.5`), decimals (`.5`),
 * exponents (`-3e2`), an optional trailing `%`. Digits glued to letters (`v2`, `ERR_404`) are not numbers.
 */
const NUMBER_RE =
  /(?<![\p{L}\p{N}_.])([-+\u2212]?)((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE]([-+]?\d+))?(?!\.?[\p{L}\p{N}_])(%?)/gu;

export function extractNumbers(text: string, options: { percentAsFraction?: boolean } = {}): number[] {
  const out: number[] = [];
  NUMBER_RE.lastIndex = 0;
  for (let m = NUMBER_RE.exec(text); m; m = NUMBER_RE.exec(text)) {
    const sign = m[1] === '-' || m[1] === '\u2212' ? '-' : '';
    const exp = m[3] !== undefined ? `e${m[3]}` : '';
    let n = Number(`${sign}${m[2]!.replace(/,/g, '')}${exp}`);
    if (m[4] === '%' && options.percentAsFraction) n /= 100;
    if (Number.isFinite(n)) out.push(n);
  }
  return out;
}

function toNumber(raw: unknown): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
  if (typeof raw === 'string') {
    const all = extractNumbers(raw);
    return all.length === 1 ? all[0] : undefined;
  }
  return undefined;
}

/**
 * Numeric match. soft = 1 within tolerance, otherwise 1 − |got − expected| / max(|got|, |expected|)
 * (clamped at 0: 90 for 100 gets 0.9, a sign error gets 0); hard = within tolerance.
 */
export function numeric<E = unknown>(options: NumericOptions<E> = {}): Scorer<E> {
  checkOptions('numeric', OPTION_SCHEMAS.numeric, options);
  const name = options.name ?? 'numeric';
  const tolerance = options.tolerance ?? 0;
  if (!Number.isFinite(tolerance) || tolerance < 0)
    throw new ScorerError(name, `tolerance must be a number ≥ 0, got ${tolerance}`);
  const pick = options.pick ?? 'last';

  const expectedOf = (task: SkillTask<E>): number => {
    const raw: unknown = options.expected !== undefined ? resolvePerTask(options.expected, task) : task.expected;
    const n = toNumber(raw);
    if (n === undefined)
      throw new ScorerError(
        name,
        `task ${task.id}: expected must be a finite number (or a string holding one), got ${show(raw)}`,
      );
    return n;
  };

  return referenceScorer(name, expectedOf, ({ output }, expected) => {
    const numbers = extractNumbers(output, options);
    const got = pick === 'first' ? numbers[0] : numbers[numbers.length - 1];
    if (got === undefined)
      return { hard: 0, soft: 0, feedback: `expected ${expected}, found no number in ${show(output)}` };
    const err = Math.abs(got - expected);
    const allowed = options.relative ? tolerance * Math.abs(expected) : tolerance;
    const fuzz = 1e-9 * Math.max(1, Math.abs(expected));
    if (err <= allowed + fuzz) {
      return {
        hard: 1,
        soft: 1,
        feedback: err === 0 ? `answer ${got} is correct` : `answer ${got} is within tolerance of ${expected}`,
      };
    }
    const scale = Math.max(Math.abs(got), Math.abs(expected));
    const soft = Math.max(0, 1 - err / scale);
    const tol = options.relative ? `${tolerance * 100}% relative` : String(tolerance);
    return {
      hard: 0,
      soft,
      feedback: `expected ${expected}, got ${got} (off by ${+err.toPrecision(6)}; tolerance ${tol})`,
    };
  });
}
