import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Accounting } from '../../src/model/accounting.ts';
import { KeptCosts, rowCost } from '../../src/optimizer/kept-cost.ts';
import { RunStore } from '../../src/optimizer/run-store.ts';
import type { CaseRecord, TokenSummary } from '../../src/types.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function call(a: Accounting, stage: string, tokens = 10): void {
  a.recordAttempt(stage);
  a.recordSuccess(stage, { prompt_tokens: tokens, completion_tokens: 1 }, 1);
}

function row(after_commit: number): CaseRecord & { after_commit: number } {
  return {
    id: 'c1',
    usage: { calls: 1, attempts: 2, prompt_tokens: 5, completion_tokens: 1 },
    judge_usage: { calls: 1, attempts: 1, prompt_tokens: 3, completion_tokens: 1 },
    error_kind: null,
    after_commit,
  } as unknown as CaseRecord & { after_commit: number };
}

describe('KeptCosts: kept results bring their cost to a resumed run, once', () => {
  it('counts what was kept after the last commit, not what the commit counted; what was sent and not kept is lost', () => {
    const root = mkdtempSync(join(tmpdir(), 'skillopt-kept-'));
    dirs.push(root);
    const store = new RunStore(root);

    // the first process: one analyst patch before its commit, one after, then a ranking call it kept nothing of
    const first = new Accounting();
    let commits = 0;
    const k1 = new KeptCosts(store, first, 0, () => commits);
    const tap = (stage: string) => {
      const t = new Accounting();
      call(t, stage);
      first.merge(t.snapshot());
      return t.snapshot();
    };
    k1.record(join(root, 'a.json'), tap('analyst'));
    commits = 1;
    const committed: TokenSummary = first.snapshot();
    k1.record('b.json', tap('analyst'));
    call(first, 'ranking');
    const sent = k1.sent(); // usage.json as the killed process last wrote it
    expect(sent._total!.calls).toBe(3);

    // the resumed process starts from the commit and reuses both patches
    const second = new Accounting();
    second.merge(committed);
    const k2 = new KeptCosts(store, second, 1, () => 1, { sent, committed });
    k2.reused('a.json'); // counted by the commit already
    expect(second.snapshot().analyst!.calls).toBe(1);
    k2.reused(join(root, 'b.json')); // kept after the commit: its cost comes with it
    k2.reused('b.json'); // once
    expect(second.snapshot().analyst).toMatchObject({ calls: 2, attempts: 2, prompt_tokens: 20 });
    expect(second.snapshot().ranking).toBeUndefined();
    // the ranking call was sent, its reply not kept: reported apart, not in the totals
    expect(k2.lost()).toMatchObject({ ranking: { calls: 1, attempts: 1 }, _total: { calls: 1, attempts: 1 } });
    // the resumed process redoes the ranking: it counts once in the totals, and the lost one stays known
    call(second, 'ranking');
    expect(second.snapshot()._total!.calls).toBe(3);
    expect(k2.sent()._total!.calls).toBe(4);
    expect(k2.lost()._total!.calls).toBe(1);
  });

  it('rows: a reused row kept after the commit brings its rollout and judge calls; rows this process wrote do not', () => {
    const root = mkdtempSync(join(tmpdir(), 'skillopt-kept-'));
    dirs.push(root);
    const a = new Accounting();
    const k = new KeptCosts(new RunStore(root), a, 2, () => 2);
    k.reusedRow('old', row(1)); // before the commit: counted there
    expect(a.snapshot()._total!.calls).toBe(0);
    k.reusedRow('kept', row(2));
    k.reusedRow('kept', row(2));
    expect(a.snapshot()).toMatchObject({
      rollout: { calls: 1, attempts: 2, retries: 1 },
      judge: { calls: 1, attempts: 1, retries: 0 },
    });
    k.wroteRow('mine');
    k.reusedRow('mine', row(2));
    expect(a.snapshot()._total!.calls).toBe(2);
    expect(rowCost({ ...row(0), error_kind: 'infra' }).rollout).toMatchObject({ errors: 1 });
  });
});
