import { describe, expect, it } from 'vitest';
import { formatCallFinding, parseCallFindings, type CallFinding } from '../../src/protocol/tool-feedback.ts';

describe('tool-call feedback lines', () => {
  const findings: CallFinding[] = [
    { kind: 'missing', name: 'read_file', args: { path: 'logs/run (1).txt' } },
    {
      kind: 'wrong',
      name: 'run_command',
      args: { cmd: 'ls' },
      expected: { cmd: 'python train.py --cfg-options a=1 {b}' },
    },
    { kind: 'extra', name: 'list_dir', args: { path: '.' } },
    { kind: 'order', name: 'run_command', args: { cmd: 'x' }, after: 'read_file' },
  ];

  it('round-trips every kind, nested braces and parentheses included', () => {
    const text = ['2 of 3 expected calls made', ...findings.map(formatCallFinding), 'answer: ok'].join('\n');
    expect(parseCallFindings(text)).toEqual(findings);
  });

  it('reads the documented wording', () => {
    expect(formatCallFinding(findings[0]!)).toBe('missing call: read_file {"path":"logs/run (1).txt"}');
    expect(formatCallFinding(findings[1]!)).toBe(
      'wrong arguments: run_command {"cmd":"ls"} (expected {"cmd":"python train.py --cfg-options a=1 {b}"})',
    );
  });
});
