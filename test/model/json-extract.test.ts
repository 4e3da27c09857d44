import { describe, expect, it } from 'vitest';
import { extractJson, findJsonFence, repairJson, topLevelObjects } from '../../src/model/json-extract.ts';

function ok(text: string) {
  const r = extractJson(text);
  if ('error' in r) throw new Error(`expected a value, got error: ${r.error}`);
  return r;
}
function err(text: string): string {
  const r = extractJson(text);
  if (!('error' in r)) throw new Error(`expected an error, got ${JSON.stringify(r.value)}`);
  return r.error;
}

describe('extractJson', () => {
  it('prefers the first ```json fence', () => {
    const text = 'Here you go:\n```json\n{"edits": [{"op": "append"}]}\n```\nand a draft {"edits": []}';
    expect(ok(text)).toEqual({ value: { edits: [{ op: 'append' }] }, method: 'fence' });
  });
  it('reads fences longer than three backticks and unterminated fences', () => {
    expect(ok('````json\n{"a": "x ``` y"}\n````').value).toEqual({ a: 'x ``` y' });
    expect(ok('```json\n{"a": 1}').value).toEqual({ a: 1 });
    expect(ok('```\n{"bare": true}\n```').value).toEqual({ bare: true });
  });
  it('parses the whole text, then the greedy span', () => {
    expect(ok('  {"a": 1}  ')).toEqual({ value: { a: 1 }, method: 'whole' });
    expect(ok('Sure! {"a": {"b": [1, 2]}} Hope that helps.')).toEqual({
      value: { a: { b: [1, 2] } },
      method: 'greedy',
    });
  });
  it('repairs a single unambiguous candidate', () => {
    // trailing commas + prose braces around
    const r = ok('Result {"edits": [{"op": "append", "content": "x"},],} (see note} {');
    expect(r).toEqual({ value: { edits: [{ op: 'append', content: 'x' }] }, method: 'repair' });
    // smart quotes around keys and values
    expect(ok('{\u201cop\u201d: \u201cdelete\u201d, "target": "x"}').value).toEqual({ op: 'delete', target: 'x' });
    // raw newlines inside strings
    expect(ok('{"content": "line 1\nline 2"}').value).toEqual({ content: 'line 1\nline 2' });
    // unescaped ASCII quotes inside a (CJK) string
    expect(ok('{"content": "使用"缓存"来加速", "op": "append"}').value).toEqual({
      content: '使用"缓存"来加速',
      op: 'append',
    });
  });
  it('uses the fenced body when it holds exactly one object', () => {
    const text = 'draft {"x": 0}\n```json\n{"a": 1,}\n```\n';
    expect(ok(text).value).toEqual({ a: 1 });
  });
  it('ignores braces inside quoted prose', () => {
    expect(ok('He wrote "use {x}" here: {"a": 1,}').value).toEqual({ a: 1 });
  });
  it('refuses ambiguous replies (two top-level objects)', () => {
    expect(err('First try {"op": "append",} then better {"op": "delete",}')).toMatch(/ambiguous.*2/);
    // a prose-looking second object still makes the reply ambiguous (it may be a discarded edit)
    expect(err('Do {"op": "append",} not {op: delete}')).toMatch(/ambiguous/);
  });
  it('refuses prose pseudo-JSON', () => {
    expect(err('I would do {op: delete} here')).toMatch(/no JSON object found/);
    expect(err("{'op': 'delete'}")).toMatch(/no JSON object found/);
    expect(err('{`op`: `delete`}')).toMatch(/no JSON object found/);
  });
  it('reports no JSON at all', () => {
    expect(err('just words')).toBe('no JSON object found');
    expect(err('')).toBe('no JSON object found');
    expect(err('[1, 2, 3]')).toBe('no JSON object found');
  });
  it('handles 1 MB of malformed input', () => {
    const big = '{'.repeat(1_000_000);
    expect(err(big)).toBe('no JSON object found');
    const mixed = '{"a": "'.repeat(150_000) + '}'.repeat(1000);
    expect('error' in extractJson(mixed)).toBe(true);
    const quotes = '"{'.repeat(500_000);
    expect('error' in extractJson(quotes)).toBe(true);
    const fences = '```\n{'.repeat(200_000);
    expect('error' in extractJson(fences)).toBe(true);
  });
});

describe('helpers', () => {
  it('topLevelObjects finds maximal balanced spans, tolerating unmatched braces', () => {
    const s = '} { x {"a":{"b":1}} y {"c":"}"}';
    const spans = topLevelObjects(s).map(([a, b]) => s.slice(a, b));
    expect(spans).toEqual(['{"a":{"b":1}}', '{"c":"}"}']);
  });
  it('findJsonFence returns the first json-tagged fence', () => {
    expect(findJsonFence('```ts\nx\n```\n```json\n{"a":1}\n```')?.body).toBe('{"a":1}');
    expect(findJsonFence('no fences')).toBeUndefined();
  });
  it('repairJson leaves valid JSON unchanged', () => {
    const v = '{"a": [1, 2, {"b": "c \\" d"}], "e": "\\u00e9"}';
    expect(repairJson(v)).toBe(v);
    expect(repairJson('{"a": "bad \\x escape"}')).toBe('{"a": "bad \\\\x escape"}');
  });
});
