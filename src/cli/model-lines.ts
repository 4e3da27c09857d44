/**
 * The end report's lines of an optimize run over several target models (docs/optimizer.md#several-models):
 * one per model — the seed → best pass rate on val and on test with their intervals, the paired change
 * with its verdict (on test with its interval too), the model's calls and cost by phase. Transfer models say so.
 */
import { formatMoney } from '../cost/pricing.ts';
import type { ModelReportFile } from '../runfiles/index.ts';
import { score3 } from '../util/format.ts';

const ci = (c: [number, number] | null | undefined) => (c ? ` [${score3(c[0])}, ${score3(c[1])}]` : '');
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;

/** `[label, text]` per model, as printEndReport takes them. */
export function modelLines(models: readonly ModelReportFile[], currency: string): Array<[string, string]> {
  return models.map((m) => {
    const parts: string[] = [];
    if (m.val) {
      const p = m.val.paired;
      parts.push(
        `val ${score3(m.val.seed.pass_rate)}${ci(m.val.seed.ci)} → ${score3(m.val.best.pass_rate)}${ci(m.val.best.ci)}` +
          (p && p.delta !== null ? `, Δ ${signed(p.delta)} ${p.verdict}` : ''),
      );
    }
    if (m.test) {
      const p = m.test.paired;
      parts.push(
        `test ${score3(m.test.seed?.pass_rate ?? null)}${ci(m.test.seed?.ci)} → ${score3(m.test.best?.pass_rate ?? null)}${ci(m.test.best?.ci)}` +
          (p && p.delta !== null
            ? `, Δ ${signed(p.delta)}${p.interval ? ` [${signed(p.interval[0])}, ${signed(p.interval[1])}]` : ''} ${p.verdict}`
            : ''),
      );
    }
    const c = m.calls;
    const phases = m.role === 'train' ? `train ${c.train} · val ${c.val} · test ${c.test}` : `test ${c.test}`;
    parts.push(
      `${c.total} calls (${phases})${m.cost.total !== null ? `, ${formatMoney(m.cost.total, currency)}` : ''}`,
    );
    return [m.role === 'transfer' ? `${m.name} (transfer)` : m.name, parts.join(' · ')];
  });
}
