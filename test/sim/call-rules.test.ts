import { describe, expect, it } from 'vitest';
import {
  callRuleLine,
  canonicalJson,
  fillArgs,
  fillText,
  firingCallRules,
  firstToken,
  generalizeArgs,
  isCallRuleLine,
  matchesTemplate,
  parseCallRuleLine,
  parseCallRules,
  placeholdersIn,
} from '../../src/sim/call-rules.ts';
import { parseRuleLine } from '../../src/sim/rules.ts';
import { SkillOptError } from '../../src/util/errors.ts';

describe('call-rule grammar', () => {
  it('parses the canonical call rule, on the input', () => {
    expect(
      parseCallRuleLine(
        '- When the input mentions `smoke`, call `run_command` with `{"cmd": "python -m skillopt.train --smoke"}`',
      ),
    ).toEqual({
      triggers: ['smoke'],
      source: 'input',
      tool: 'run_command',
      args: { cmd: 'python -m skillopt.train --smoke' },
    });
  });

  it('a rule whose text before the first trigger says result triggers on the last tool result', () => {
    expect(
      parseCallRuleLine('- If the result mentions `Traceback`, call `read_file` with `{"path": "<path>"}`.'),
    ).toEqual({
      triggers: ['Traceback'],
      source: 'result',
      tool: 'read_file',
      args: { path: '<path>' },
    });
    // "result" after the trigger does not count
    expect(parseCallRuleLine('- When the input mentions `result`, call `list_dir`.')!.source).toBe('input');
  });

  it('several triggers, deduplicated; no arguments is {}', () => {
    expect(parseCallRuleLine('- When the input mentions `eval` or `Eval` or `test split`, call `list_dir`')).toEqual({
      triggers: ['eval', 'test split'],
      source: 'input',
      tool: 'list_dir',
      args: {},
    });
  });

  it('is not a call rule: no trigger, no tool span, a bad tool name, arguments that are not a JSON object', () => {
    expect(parseCallRuleLine('Always call `run_command` first.')).toBeNull();
    expect(parseCallRuleLine('- When the input mentions `x`, call the tool.')).toBeNull();
    expect(parseCallRuleLine('- When the input mentions `x`, call the tool `y`.')).toBeNull();
    expect(parseCallRuleLine('- When the input mentions `x`, call `run command`.')).toBeNull();
    expect(parseCallRuleLine('- When the input mentions `x`, call `run` with `{"cmd": }`.')).toBeNull();
    expect(parseCallRuleLine('- When the input mentions `x`, call `run` with `["ls"]`.')).toBeNull();
    expect(parseCallRuleLine('- When the input mentions `x`, recall `run`.')).toBeNull(); // whole word only
    // `call` inside a trigger does not count
    expect(parseCallRuleLine('- When the input mentions `call stack`, answer `stack`.')).toBeNull();
  });

  it('an answer joiner before `call` makes the line an answer rule, and a call rule is never an answer rule', () => {
    const answer = '- `A` → `B`, then call `c`';
    expect(isCallRuleLine(answer)).toBe(false);
    expect(parseRuleLine(answer)).toEqual({ triggers: ['A'], answer: 'B' });
    expect(isCallRuleLine('- When the input mentions `A`, call `read_file` with `{"path": "x.md"}`.')).toBe(true);
  });

  it('parseCallRules keeps document order, line and index', () => {
    const skill = [
      '# Ops',
      '- When the input mentions `a`, call `t1`.',
      'prose',
      '- If the result mentions `b`, call `t2` with `{"n": 1}`.',
    ].join('\n');
    const rules = parseCallRules(skill);
    expect(rules.map((r) => [r.tool, r.lineIndex, r.source])).toEqual([
      ['t1', 1, 'input'],
      ['t2', 3, 'result'],
    ]);
    expect(rules[1]!.line).toBe('- If the result mentions `b`, call `t2` with `{"n": 1}`.');
  });

  it('callRuleLine writes a line that reads back as the same rule', () => {
    const line = callRuleLine(['smoke', 'quick run'], 'run_command', { cmd: 'python -m skillopt.train --smoke', n: 2 });
    expect(line).toBe(
      '- When the input mentions `smoke` or `quick run`, call `run_command` with `{"cmd":"python -m skillopt.train --smoke","n":2}`.',
    );
    expect(parseCallRuleLine(line)).toEqual({
      triggers: ['smoke', 'quick run'],
      source: 'input',
      tool: 'run_command',
      args: { cmd: 'python -m skillopt.train --smoke', n: 2 },
    });
    const onResult = callRuleLine('Traceback', 'read_file', { path: '<path>' }, { on: 'result' });
    expect(onResult).toBe('- If the result mentions `Traceback`, call `read_file` with `{"path":"<path>"}`.');
    expect(parseCallRuleLine(onResult)!.source).toBe('result');
    expect(callRuleLine('ls', 'list_dir')).toBe('- When the input mentions `ls`, call `list_dir`.');
    // a backtick in a value is escaped so that the span stays one span
    const tick = callRuleLine('x', 'run_command', { cmd: 'echo `date`' });
    expect(parseCallRuleLine(tick)!.args).toEqual({ cmd: 'echo `date`' });
  });

  it('callRuleLine refuses what it cannot write, naming it', () => {
    expect(() => callRuleLine('a`b', 'run')).toThrow(SkillOptError);
    expect(() => callRuleLine('a`b', 'run')).toThrow(/trigger "a`b"/);
    expect(() => callRuleLine([], 'run')).toThrow(/at least one trigger/);
    expect(() => callRuleLine('x', 'run command')).toThrow(/tool name "run command"/);
    expect(() => callRuleLine('x', 'run', [] as unknown as Record<string, unknown>)).toThrow(
      /'run': arguments must be a JSON object/,
    );
  });
});

describe('placeholders', () => {
  it('path: a / or a known file extension; not flags, URLs, numbers or a sentence end', () => {
    expect(firstToken('path', 'python -m skillopt.train --config configs/local.yaml --smoke')).toBe(
      'configs/local.yaml',
    );
    expect(firstToken('path', 'Read best_skill.md.')).toBe('best_skill.md');
    expect(firstToken('path', 'see https://example.com/x then outputs/run-3/')).toBe('outputs/run-3/');
    expect(firstToken('path', 'ratio 1/2 and version skillopt.train')).toBeNull();
  });

  it('string, number, id', () => {
    expect(firstToken('string', 'Add a benchmark named "ticket-triage" now')).toBe('ticket-triage');
    expect(firstToken('string', 'named “curly”')).toBe('curly');
    expect(firstToken('string', 'an empty "" string')).toBeNull();
    expect(firstToken('number', 'order ORD-1234 of v2, the 3rd: 30 units at 0.85')).toBe('30');
    expect(firstToken('number', 'moved by -2.5.')).toBe('-2.5');
    expect(firstToken('number', 'no digits')).toBeNull();
    expect(firstToken('id', 'refund ORD-1234 and JIRA-7')).toBe('ORD-1234');
    expect(firstToken('id', 'ord-1234 or ORD-x or XORD-12a')).toBeNull();
  });

  it('placeholdersIn lists the kinds of a template', () => {
    expect(placeholdersIn({ a: '<path>', b: ['x <id> <path>'], c: 3, d: { e: '<number>' } })).toEqual([
      'path',
      'id',
      'number',
    ]);
    expect(placeholdersIn('<nope> <string>')).toEqual(['string']);
  });

  it('fills from the first source that has a token; no match → null (the rule does not fire)', () => {
    expect(fillArgs({ path: '<path>' }, ['Read logs/run.txt please', 'other/file.md'])).toEqual({
      path: 'logs/run.txt',
    });
    expect(fillArgs({ path: '<path>' }, ['no path here', 'error in other/file.md'])).toEqual({ path: 'other/file.md' });
    expect(fillArgs({ path: '<path>' }, ['no path here', null])).toBeNull();
    expect(
      fillArgs({ cmd: 'cat <path> | grep <id>', n: '<number>', keep: true }, ['ORD-9 at a/b.txt, 12 lines']),
    ).toEqual({
      cmd: 'cat a/b.txt | grep ORD-9',
      n: 12,
      keep: true,
    });
    expect(fillArgs({ nested: { list: ['<id>'] } }, ['no id'])).toBeNull();
    expect(fillText('Ran <string>; outputs in <path>', ['"smoke" run', 'written to outputs/x/'])).toBe(
      'Ran smoke; outputs in outputs/x/',
    );
    expect(fillText('plain', [])).toBe('plain');
  });

  it('generalizeArgs turns the values the sources name first into placeholders', () => {
    expect(
      generalizeArgs({ path: 'logs/run.txt', order_id: 'ORD-12', n: 30, cmd: 'ls' }, [
        'Read logs/run.txt for ORD-12, 30 lines',
      ]),
    ).toEqual({
      path: '<path>',
      order_id: '<id>',
      n: '<number>',
      cmd: 'ls',
    });
  });

  it('matchesTemplate: same keys, literals equal, a placeholder stands for any text', () => {
    expect(matchesTemplate({ path: '<path>' }, { path: 'a/b.md' })).toBe(true);
    expect(matchesTemplate({ cmd: 'cat <path> --x' }, { cmd: 'cat a/b.md --x' })).toBe(true);
    expect(matchesTemplate({ cmd: 'cat <path> --x' }, { cmd: 'cat a/b.md' })).toBe(false);
    expect(matchesTemplate({ cmd: 'ls' }, { cmd: 'ls', extra: 1 })).toBe(false);
    expect(matchesTemplate({ n: '<number>' }, { n: 3 })).toBe(true);
    expect(matchesTemplate({}, {})).toBe(true);
    expect(matchesTemplate({ a: 1 }, 'not json')).toBe(false);
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 1 }] })).toBe('{"a":[{"c":1,"d":2}],"b":1}');
  });
});

describe('firingCallRules (no world)', () => {
  const rules = parseCallRules(
    [
      '- When the input mentions `smoke`, call `run_command` with `{"cmd": "train --config <path> --smoke"}`.',
      '- When the input mentions `smoke` or `SMOKE TEST`, call `list_dir`.',
      '- If the result mentions `Traceback`, call `read_file` with `{"path": "<path>"}`.',
    ].join('\n'),
  );
  const fired = (ctx: Parameters<typeof firingCallRules>[1]) =>
    firingCallRules(rules, ctx).map((f) => [f.rule.tool, f.trigger, f.args]);

  it('document order; the longest trigger; placeholders filled, an unmatched one does not fire', () => {
    expect(fired({ input: 'a smoke test of configs/a.yaml' })).toEqual([
      ['run_command', 'smoke', { cmd: 'train --config configs/a.yaml --smoke' }],
      ['list_dir', 'SMOKE TEST', {}],
    ]);
    expect(fired({ input: 'smoke' })).toEqual([['list_dir', 'smoke', {}]]);
  });

  it('result rules need a result; offered tools and the history decide too', () => {
    expect(fired({ input: 'x', result: 'Traceback at b/c.py' })).toEqual([
      ['read_file', 'Traceback', { path: 'b/c.py' }],
    ]);
    expect(fired({ input: 'smoke', offered: ['run_command'] })).toEqual([]);
    expect(fired({ input: 'smoke', history: [{ name: 'list_dir', args: {} }] })).toEqual([]);
    expect(
      fired({
        input: 'x',
        result: 'Traceback at b/c.py',
        history: [{ name: 'read_file', args: { path: 'other.md' } }],
      }),
    ).toEqual([]);
  });
});
