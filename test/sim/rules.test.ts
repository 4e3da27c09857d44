import { describe, expect, it } from 'vitest';
import { matchRule, parseRuleLine, parseRules, ruleLine } from '../../src/sim/rules.ts';
import { STOPWORDS, isTypeLike, tokenize } from '../../src/sim/tokens.ts';
import { appendBeforeProtected, applyRuleMappings } from '../../src/sim/skill-edit.ts';

describe('rule grammar', () => {
  it('parses the canonical rule line', () => {
    expect(parseRuleLine('- When the input mentions `ObjectDisposedException`, answer `disposed-object`.')).toEqual({
      triggers: ['ObjectDisposedException'],
      answer: 'disposed-object',
    });
  });

  it.each([
    ['answer', 'If you see `Foo` answer `bar`'],
    ['answers', '`Foo` answers `bar`'],
    ['respond', 'On `Foo`, respond with `bar`'],
    ['reply', 'For `Foo` REPLY `bar`'],
    ['output', 'Given `Foo`, Output `bar`'],
    ['→', '`Foo` → `bar`'],
    ['->', '`Foo` -> `bar`'],
    ['=>', '`Foo`=>`bar`'],
  ])('accepts the joiner %s', (_joiner, line) => {
    expect(parseRuleLine(line)).toEqual({ triggers: ['Foo'], answer: 'bar' });
  });

  it('treats every span before the joiner as a trigger and the first span after as the answer', () => {
    expect(parseRuleLine('- `A` or `B` → `C` (not `D`)')).toEqual({ triggers: ['A', 'B'], answer: 'C' });
  });

  it('needs whole joiner words, a trigger before and an answer after', () => {
    expect(parseRuleLine('Reply with `unknown` when no rule applies.')).toBeNull();
    expect(parseRuleLine('Use `dotnet-dump` to inspect the heap.')).toBeNull();
    expect(parseRuleLine('The `Foo` answered `bar`')).toBeNull(); // "answered" is not a joiner word
    expect(parseRuleLine('`Foo` reply')).toBeNull();
    expect(parseRuleLine('no backticks here, answer bar')).toBeNull();
    // A joiner word inside a trigger does not count; the text joiner after it does.
    expect(parseRuleLine('`output buffer` overflow → `overflow`')).toEqual({
      triggers: ['output buffer'],
      answer: 'overflow',
    });
  });

  it('returns rules in document order with line indexes and exact lines, ignoring non-rule lines', () => {
    const skill = [
      '# Debugging skill',
      'Read the stack trace and look for `Exception` names.',
      '- When the input mentions `FooError`, answer `foo`.',
      '',
      '  * `Bar` -> `bar`',
      'Reply with `unknown` otherwise.',
    ].join('\n');
    const rules = parseRules(skill);
    expect(rules.map((r) => [r.lineIndex, r.triggers, r.answer, r.line])).toEqual([
      [2, ['FooError'], 'foo', '- When the input mentions `FooError`, answer `foo`.'],
      [4, ['Bar'], 'bar', '  * `Bar` -> `bar`'],
    ]);
  });

  it('longest trigger wins, ties go to the first rule, matching is case-insensitive', () => {
    const rules = parseRules(
      [
        '- `Exception` → `generic`',
        '- `NullReferenceException` → `null-ref`',
        '- `Timeout` → `first`',
        '- `timeout` → `second`',
      ].join('\n'),
    );
    expect(matchRule(rules, 'a NullReferenceException was thrown')?.rule.answer).toBe('null-ref');
    expect(matchRule(rules, 'an exception')?.rule.answer).toBe('generic');
    expect(matchRule(rules, 'TIMEOUT!')?.rule.answer).toBe('first');
    expect(matchRule(rules, 'nothing relevant')).toBeNull();
    expect(matchRule(rules, 'NULLREFERENCEEXCEPTION')?.trigger).toBe('NullReferenceException');
  });

  it('writes canonical rule lines that parse back', () => {
    const line = ruleLine(['A', 'B'], 'c');
    expect(line).toBe('- When the input mentions `A` or `B`, answer `c`.');
    expect(parseRuleLine(line)).toEqual({ triggers: ['A', 'B'], answer: 'c' });
  });
});

describe('analyst tokenizer', () => {
  it('emits backticked spans, identifiers, dotted names and their components', () => {
    const keys = tokenize('Calling `await foo()` then task.Result on DateTime.Now with the var x; e.g. IO').map(
      (t) => t.text,
    );
    expect(keys).toEqual([
      'await foo()',
      'Calling',
      'foo',
      'task.Result',
      'task',
      'Result',
      'DateTime.Now',
      'DateTime',
      'Now',
    ]);
  });

  it('dedupes case-insensitively, keeps async, drops stopwords and short words', () => {
    const tokens = tokenize('Async void; async VOID; the public static Handler handler');
    expect(tokens.map((t) => t.key)).toEqual(['async', 'handler']);
    expect(STOPWORDS.has('await')).toBe(true);
    expect(STOPWORDS.has('async')).toBe(false);
  });

  it('keeps backticked spans of 2..60 characters', () => {
    expect(tokenize('`x` `ab` `' + 'y '.repeat(31) + '`').map((t) => t.text)).toEqual(['ab']);
  });

  it('recognises type-like tokens', () => {
    expect(isTypeLike('ObjectDisposedException')).toBe(true);
    expect(isTypeLike('task.Result')).toBe(true);
    expect(isTypeLike('handler')).toBe(false);
    expect(isTypeLike('Handler')).toBe(false);
    expect(isTypeLike('HTTP')).toBe(false);
    expect(isTypeLike('lock', { backticked: true })).toBe(true);
    expect(tokenize('`lock` statement').find((t) => t.key === 'lock')?.typeLike).toBe(true);
  });
});

describe('rule-level skill edits', () => {
  it('appends before protected regions', () => {
    const skill = '# S\n\n- `A` → `a`\n\n<!-- SLOW_UPDATE_START -->\nguidance\n<!-- SLOW_UPDATE_END -->\n';
    expect(appendBeforeProtected(skill, '- `B` → `b`')).toBe(
      '# S\n\n- `A` → `a`\n\n- `B` → `b`\n\n<!-- SLOW_UPDATE_START -->\nguidance\n<!-- SLOW_UPDATE_END -->\n',
    );
    expect(appendBeforeProtected('# S\n', 'x')).toBe('# S\n\nx\n');
  });

  it('replaces a conflicting rule in place and keeps its other triggers', () => {
    const skill = '# S\n- `A` or `B` → `old`\n- `C` → `c`\n';
    const { skill: out, changes } = applyRuleMappings(skill, [
      { trigger: 'a', answer: 'new' },
      { trigger: 'C', answer: 'c' },
      { trigger: 'D', answer: 'd' },
    ]);
    expect(out).toBe(
      '# S\n- When the input mentions `B`, answer `old`.\n- When the input mentions `a`, answer `new`.\n- `C` → `c`\n\n' +
        '- When the input mentions `D`, answer `d`.\n',
    );
    expect(changes).toHaveLength(2);
  });
});
