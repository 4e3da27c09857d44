import { describe, expect, it } from 'vitest';
import { markdownBlocks, skillChange } from '../../src/skill/units.ts';
import { APPENDIX_END, APPENDIX_START, SLOW_UPDATE_END, SLOW_UPDATE_START } from '../../src/skill/regions.ts';

const BASE = [
  '# Triage',
  '',
  'Classify the ticket.',
  '',
  '- When the input mentions `login`, answer `auth`.',
  '- When the input mentions `invoice`, answer `billing`.',
  '',
  'Reply with `unknown` otherwise.',
  '',
].join('\n');

describe('skill change units', () => {
  it('three rules appended in one hunk are three block units, each revertible alone', () => {
    const cand = BASE.replace(
      'answer `billing`.\n',
      'answer `billing`.\n- When the input mentions `crash`, answer `mobile`.\n- When the input mentions `deploy`, answer `infra`.\n- When the input mentions `refund`, answer `payments`.\n',
    );
    const ch = skillChange(BASE, cand);
    expect(ch.units.map((u) => [u.id, u.kind, u.lines, u.text])).toEqual([
      ['u1', 'block', [7, 7], '- When the input mentions `crash`, answer `mobile`.'],
      ['u2', 'block', [8, 8], '- When the input mentions `deploy`, answer `infra`.'],
      ['u3', 'block', [9, 9], '- When the input mentions `refund`, answer `payments`.'],
    ]);
    expect(ch.textWith([])).toBe(cand);
    expect(ch.textWith(['u1', 'u2', 'u3'])).toBe(BASE);
    expect(ch.textWith(['u2'])).toBe(cand.replace('- When the input mentions `deploy`, answer `infra`.\n', ''));
    expect(skillChange(BASE, cand, 'hunk').units.map((u) => u.lines)).toEqual([[7, 9]]);
    expect(() => ch.textWith(['u9'])).toThrow('no unit u9 in this change (units: u1, u2, u3)');
  });

  it('a replaced rule is one unit; a deletion shows the removed lines, prefixed -', () => {
    const cand = BASE.replace('answer `auth`', 'answer `identity`').replace(
      '- When the input mentions `invoice`, answer `billing`.\n',
      '',
    );
    const ch = skillChange(BASE, cand, 'line');
    expect(ch.units.map((u) => [u.lines, u.text])).toEqual([
      [[5, 5], '- When the input mentions `login`, answer `identity`.'],
      [[6, 6], '-- When the input mentions `invoice`, answer `billing`.'],
    ]);
    expect(ch.textWith(['u2'])).toBe(BASE.replace('answer `auth`', 'answer `identity`'));
    expect(ch.textWith(['u1'])).toBe(BASE.replace('- When the input mentions `invoice`, answer `billing`.\n', ''));
  });

  it('hunks group changes at most six unchanged lines apart; lines split every changed line', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`);
    const base = `${lines.join('\n')}\n`;
    const cand = `${lines.map((l, i) => (i === 2 || i === 8 || i === 25 ? `${l} changed` : l)).join('\n')}\n`;
    expect(skillChange(base, cand, 'hunk').units.map((u) => u.lines)).toEqual([
      [3, 9],
      [26, 26],
    ]);
    expect(skillChange(base, cand, 'line').units.map((u) => u.lines)).toEqual([
      [3, 3],
      [9, 9],
      [26, 26],
    ]);
    const hunks = skillChange(base, cand, 'hunk');
    expect(hunks.textWith(['u1'])).toBe(base.replace('line 25', 'line 25 changed'));
  });

  it('a protected region is one unit, markers and content; the frontmatter is never one', () => {
    const front = '---\nname: triage\ndescription: Route tickets.\n---\n';
    const base = `${front}${BASE}`;
    const region = `${SLOW_UPDATE_START}\n- note one\n\n- note two\n${SLOW_UPDATE_END}\n`;
    const cand = `${front.replace('Route tickets.', 'Route support tickets.')}${BASE}- When the input mentions \`sso\`, answer \`auth\`.\n${region}${APPENDIX_START}\nx\n${APPENDIX_END}\n`;
    const ch = skillChange(base, cand);
    expect(ch.units.map((u) => [u.id, u.region ?? null, u.text])).toEqual([
      ['u1', null, '- When the input mentions `sso`, answer `auth`.'],
      ['u2', 'slow_update', region.trimEnd()],
      ['u3', 'appendix', `${APPENDIX_START}\nx\n${APPENDIX_END}`],
    ]);
    // every unit reverted: the body is the baseline's, the frontmatter change stays
    expect(ch.textWith(['u1', 'u2', 'u3'])).toBe(base.replace('Route tickets.', 'Route support tickets.'));
  });

  it('markdown blocks: a list item with its continuation lines, a heading with its lines, paragraphs', () => {
    const lines = [
      '- item one',
      '  continued',
      '',
      '  still item one',
      '- item two',
      '## Heading',
      'under it',
      '',
      'A paragraph',
      'two lines',
      '',
      '1. numbered',
    ];
    expect(markdownBlocks(lines)).toEqual([
      [0, 4],
      [4, 5],
      [5, 8],
      [8, 11],
      [11, 12],
    ]);
    expect(markdownBlocks(['', '', 'text'])).toEqual([[0, 3]]);
    expect(markdownBlocks([])).toEqual([]);
  });
});
