/**
 * The overfitting guard on hand-built train/val items: long spans copied from a train input or
 * expected answer are flagged (not when the span is already in the skill or also in a val input),
 * triggers found in train inputs but in no val input are flagged, and the mode decides flag vs reject.
 */
import { describe, expect, test } from 'vitest';
import {
  applyGuard,
  describeFlag,
  guardItems,
  itemText,
  triggerTerms,
  type GuardContext,
} from '../../src/optimizer/overfit-guard.ts';
import type { Item } from '../../src/optimizer/patch.ts';

const ctx: GuardContext = {
  skill: '# Triage\n\n- When the input mentions `timeout`, answer `network`.\n',
  train: [
    {
      id: 't1',
      input: 'Customer says the invoice export button greys out after the March release, timeout shown',
      expected: 'billing',
    },
    {
      id: 't2',
      input: 'Crash: System.ObjectDisposedException in ReportWriter.Flush via HttpClientHandler',
      expected: 'disposed-object',
    },
    {
      id: 't3',
      input: 'Upload stuck',
      expected: 'Restart the export worker, then clear the cache folder and retry the upload twice',
    },
  ],
  valInputs: [
    'Login fails with ObjectDisposedException after idle',
    'Export greys out after the March release for the admin team today',
  ],
  minSpan: 8,
};

const append = (content: string): Item => ({ op: 'append', content });

describe('guardItems', () => {
  test('a trigger that val inputs also carry is fine', () => {
    expect(
      guardItems([append('- When the input mentions `ObjectDisposedException`, answer `disposed-object`.')], ctx),
    ).toEqual([]);
  });

  test('a long span copied from a train input is flagged, with the words and the item', () => {
    const flags = guardItems(
      [append('- When the user says the invoice export button greys out after the March release, answer `billing`.')],
      ctx,
    );
    expect(flags).toEqual([
      {
        index: 0,
        kind: 'copied_span',
        text: 'says the invoice export button greys out after the march release',
        source: { id: 't1', field: 'input' },
      },
    ]);
  });

  test('a long span copied from a train expected answer is flagged', () => {
    const flags = guardItems(
      [append('- Tell the user: restart the export worker, then clear the cache folder and retry.')],
      ctx,
    );
    expect(flags).toEqual([
      {
        index: 0,
        kind: 'copied_span',
        text: 'restart the export worker then clear the cache folder and retry',
        source: { id: 't3', field: 'expected' },
      },
    ]);
  });

  test('spans shorter than minSpan, or that a val input also carries, are not copies', () => {
    // "greys out after the march release" (6 words) is shorter than 8
    expect(guardItems([append('- Export greys out after the March release: answer `billing`.')], ctx)).toEqual([]);
    // every 4-word run of this span also occurs in a val input, so at minSpan 4 it is a pattern, not one item's text
    expect(
      guardItems([append('- export greys out after the march release, answer `billing`.')], { ...ctx, minSpan: 4 }),
    ).toEqual([]);
    // …while a span only t1 has is a copy at minSpan 4
    expect(
      guardItems([append('- invoice export button greys: answer `billing`.')], { ...ctx, minSpan: 4 }).map(
        (f) => f.text,
      ),
    ).toEqual(['invoice export button greys']);
  });

  test('a trigger only train inputs contain is flagged; a term the skill already has is not', () => {
    const flags = guardItems(
      [
        append('- For `ReportWriter.Flush`, answer `disposed-object`.'),
        append('- When the input mentions `timeout`, answer `billing`.'),
      ],
      ctx,
    );
    expect(flags).toEqual([
      { index: 0, kind: 'train_only_trigger', text: 'ReportWriter.Flush', source: { id: 't2', field: 'input' } },
    ]);
  });

  test('without quoted terms, identifier-like tokens are the triggers', () => {
    expect(triggerTerms('HttpClientHandler errors mean a network fault in System.Net or HTTP2 or io_uring')).toEqual([
      'HttpClientHandler',
      'System.Net',
      'HTTP2',
      'io_uring',
    ]);
    expect(triggerTerms('Use `a` and "the quoted one"')).toEqual(['a', 'the quoted one']);
    const flags = guardItems([append('- HttpClientHandler errors mean a network fault.')], ctx);
    expect(flags.map(describeFlag)).toEqual([
      'edit 1 trigger "HttpClientHandler" occurs in train only (train item t2, input)',
    ]);
  });

  test('without val inputs the trigger test is skipped (cannot tell "never in val")', () => {
    expect(
      guardItems([append('- For `ReportWriter.Flush`, answer `disposed-object`.')], { ...ctx, valInputs: [] }),
    ).toEqual([]);
  });

  test('a delete adds nothing and is never flagged', () => {
    expect(
      guardItems([{ op: 'delete', target: 'the invoice export button greys out after the March release' }], ctx),
    ).toEqual([]);
  });
});

describe('itemText by update mode', () => {
  test('edit content, suggestion title and instruction, the new lines of a full rewrite', () => {
    expect(itemText({ op: 'replace', target: 'x', content: 'y' }, '')).toBe('y');
    expect(
      itemText({ type: 'add_rule', title: 'T', instruction: 'I', motivation: '', priority_hint: 'medium' }, ''),
    ).toBe('T\nI');
    expect(itemText({ title: '', change_summary: [], new_skill: '# S\nold\nnew line\n' }, '# S\nold\n')).toBe(
      'new line',
    );
  });
});

describe('applyGuard', () => {
  const items = [
    append('- When the input mentions `ObjectDisposedException`, answer `disposed-object`.'),
    append('- For `ReportWriter.Flush`, answer `disposed-object`.'),
  ];

  test('off: nothing checked', () => {
    expect(applyGuard('off', items, ctx)).toEqual({ items, flags: [], rejected: [] });
  });

  test('flag: every item goes on, the flags are reported', () => {
    const r = applyGuard('flag', items, ctx);
    expect(r.items).toEqual(items);
    expect(r.flags.map((f) => f.index)).toEqual([1]);
    expect(r.rejected).toEqual([]);
  });

  test('reject: flagged items are removed', () => {
    const r = applyGuard('reject', items, ctx);
    expect(r.items).toEqual([items[0]]);
    expect(r.rejected).toEqual([items[1]]);
  });
});
