import { describe, expect, it } from 'vitest';
import { stripThinking } from '../../src/model/think.ts';

describe('stripThinking', () => {
  it('leaves plain text alone', () => {
    expect(stripThinking('  hello <b>world</b> ')).toEqual({ text: '  hello <b>world</b> ' });
    expect(stripThinking(null)).toEqual({ text: '' });
  });
  it('removes think / thinking / reasoning blocks anywhere, case-insensitively', () => {
    expect(stripThinking('<think>\nplan it\n</think>\n\ndisposed-object')).toEqual({
      text: 'disposed-object',
      reasoning: 'plan it',
    });
    const r = stripThinking('<THINKING a="1">x</THINKING>A <reasoning>y</reasoning>B');
    expect(r.text).toBe('A B');
    expect(r.reasoning).toBe('x\n\ny');
  });
  it('handles a leading block whose opening tag was in the prompt template', () => {
    expect(stripThinking('I should answer briefly.\n</think>\nfinal answer')).toEqual({
      text: 'final answer',
      reasoning: 'I should answer briefly.',
    });
  });
  it('treats an unterminated block (cut by max_tokens) as reasoning', () => {
    expect(stripThinking('<think>still thinking when the budget ran out')).toEqual({
      text: '',
      reasoning: 'still thinking when the budget ran out',
    });
    expect(stripThinking('answer <think>trailing').text).toBe('answer');
  });
  it('does not confuse similar tags', () => {
    expect(stripThinking('<thinker>keep</thinker>').text).toBe('<thinker>keep</thinker>');
  });
  it('is linear on pathological input', () => {
    const s = '<think '.repeat(200_000);
    expect(stripThinking(s).text.length).toBeGreaterThan(0);
    const t = '<think>'.repeat(200_000);
    expect(stripThinking(t).text).toBe('');
  });
});
