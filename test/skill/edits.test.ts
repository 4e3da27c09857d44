import { describe, expect, it } from 'vitest';
import type { Edit } from '../../src/protocol/schemas.ts';
import { applyEdit, applyEdits, findNormalizedMatches, isApplied, unmatchedEdits } from '../../src/skill/edits.ts';
import {
  APPENDIX_END,
  APPENDIX_START,
  SLOW_UPDATE_END,
  SLOW_UPDATE_START,
  addAppendixNotes,
  regionTexts,
  replaceSlowUpdate,
} from '../../src/skill/regions.ts';

const BODY = '# Skill\n\n## Rules\n- Answer briefly.\n- Cite the page.\n\n## Format\nReturn JSON.\n';
const WITH_REGIONS = addAppendixNotes(replaceSlowUpdate(BODY, 'Prefer exact quotes.'), ['Check units.']);

const one = (skill: string, edit: Edit) => applyEdits(skill, [edit]);

describe('append', () => {
  it('appends at the end with one blank line when there is no region', () => {
    const r = one(BODY, { op: 'append', content: '  - New rule.\n\n' });
    expect(r.skill).toBe(`${BODY}\n- New rule.\n`);
    expect(r.report[0]).toMatchObject({
      index: 1,
      op: 'append',
      status: 'applied_append',
      content_preview: '- New rule.',
    });
    expect(one('', { op: 'append', content: 'x' }).skill).toBe('x\n');
  });

  it('appends before the earliest protected region, keeping regions at the tail', () => {
    const r = one(WITH_REGIONS, { op: 'append', content: '## Extra\nMore.' });
    expect(r.report[0]!.status).toBe('applied_append_before_protected_region');
    expect(r.skill).toBe(`${BODY}\n## Extra\nMore.\n\n${WITH_REGIONS.slice(WITH_REGIONS.indexOf(SLOW_UPDATE_START))}`);
    expect(regionTexts(r.skill)).toEqual(regionTexts(WITH_REGIONS));
  });

  it('removes marker strings from content', () => {
    const r = one(WITH_REGIONS, {
      op: 'append',
      content: `${SLOW_UPDATE_START}\nsneaky\n${SLOW_UPDATE_END} ${APPENDIX_END}`,
    });
    expect(r.report[0]!.status).toBe('applied_append_before_protected_region');
    expect(r.report[0]!.content_preview).toBe('sneaky');
    expect(regionTexts(r.skill)).toEqual(regionTexts(WITH_REGIONS));
    expect(r.skill.split(SLOW_UPDATE_START)).toHaveLength(2);
  });

  it('reports empty content instead of appending blank lines', () => {
    const r = one(BODY, { op: 'append', content: `  ${APPENDIX_START} ` });
    expect(r.skill).toBe(BODY);
    expect(r.report[0]!.status).toBe('missing_content');
  });
});

describe('insert_after', () => {
  it('inserts the content on the line after the line holding the target', () => {
    const r = one(BODY, { op: 'insert_after', target: '- Answer briefly.', content: '- Use metric units.' });
    expect(r.report[0]!.status).toBe('applied_insert_after');
    expect(r.skill).toBe(BODY.replace('- Answer briefly.\n', '- Answer briefly.\n- Use metric units.\n'));
  });

  it('uses the end of the line even when the target is a line prefix, and handles a target ending in \\n', () => {
    expect(one(BODY, { op: 'insert_after', target: '- Answer', content: 'X' }).skill).toBe(
      BODY.replace('- Answer briefly.\n', '- Answer briefly.\nX\n'),
    );
    expect(one(BODY, { op: 'insert_after', target: '## Rules\n', content: 'X' }).skill).toBe(
      BODY.replace('## Rules\n', '## Rules\nX\n'),
    );
    expect(one('a\nlast', { op: 'insert_after', target: 'last', content: 'X' }).skill).toBe('a\nlast\nX');
  });

  it('reports a missed target instead of appending it (upstream bug §9.12)', () => {
    const r = applyEdits(BODY, [
      { op: 'insert_after', target: '## Nonexistent', content: '- orphan rule' },
      { op: 'insert_after', target: '', content: '- no target' },
      { op: 'insert_after', target: '## Rules', content: '   ' },
    ]);
    expect(r.skill).toBe(BODY);
    expect(r.report.map((x) => x.status)).toEqual(['unmatched_target', 'missing_target', 'missing_content']);
    expect(r.report[0]!.reason).toMatch(/not found/);
    expect(r.summary).toEqual({ total: 3, applied: 0, skipped: 3, errors: 0 });
    expect(unmatchedEdits(r.report).map((x) => x.index)).toEqual([1, 2, 3]);
  });

  it('refuses a target inside a protected region', () => {
    const r = one(WITH_REGIONS, { op: 'insert_after', target: 'Prefer exact quotes.', content: 'x' });
    expect(r.report[0]!.status).toBe('skipped_protected_region');
    expect(r.skill).toBe(WITH_REGIONS);
  });

  it('reverts an insertion that would land inside a region (marker on the target line)', () => {
    const skill = `intro ${SLOW_UPDATE_START}\nguide\n${SLOW_UPDATE_END}\n`;
    const r = one(skill, { op: 'insert_after', target: 'intro', content: 'x' });
    expect(r.report[0]!.status).toBe('skipped_protected_region');
    expect(r.report[0]!.reason).toMatch(/reverted/);
    expect(r.skill).toBe(skill);
  });
});

describe('replace / delete', () => {
  it('replaces and deletes the first exact occurrence', () => {
    const skill = 'x\nA\nA\n';
    expect(one(skill, { op: 'replace', target: 'A', content: 'B' }).skill).toBe('x\nB\nA\n');
    const d = one(BODY, { op: 'delete', target: '- Cite the page.\n' });
    expect(d.skill).toBe(BODY.replace('- Cite the page.\n', ''));
    expect(d.report[0]!.status).toBe('applied_delete');
    expect(one(BODY, { op: 'replace', target: 'Return JSON.', content: 'Return YAML.' }).report[0]!.status).toBe(
      'applied_replace',
    );
  });

  it('keeps target whitespace verbatim for exact matching, trims content', () => {
    const r = one(BODY, { op: 'replace', target: '- Answer briefly.\n', content: '\n- Answer in one sentence.\n\n' });
    expect(r.skill).toBe(BODY.replace('- Answer briefly.\n', '- Answer in one sentence.'));
  });

  it('falls back to a unique whitespace-normalised match', () => {
    const r = one(BODY, {
      op: 'replace',
      target: '## Rules\n\n-   Answer\tbriefly.',
      content: '## Rules\n- Answer in one line.',
    });
    expect(r.report[0]!.status).toBe('applied_normalized_match');
    expect(isApplied(r.report[0]!.status)).toBe(true);
    expect(r.report[0]!.reason).toMatch(/whitespace/);
    expect(r.skill).toBe(BODY.replace('## Rules\n- Answer briefly.', '## Rules\n- Answer in one line.'));
    const d = one(BODY, { op: 'delete', target: '  ## Format Return   JSON.  ' });
    expect(d.report[0]!.status).toBe('applied_normalized_match');
    expect(d.skill).toBe(BODY.replace('## Format\nReturn JSON.', ''));
    expect(one(BODY, { op: 'insert_after', target: '-  Cite   the page.', content: '- X' }).skill).toBe(
      BODY.replace('- Cite the page.\n', '- Cite the page.\n- X\n'),
    );
  });

  it('reports an ambiguous normalised match without applying it', () => {
    const skill = 'Use  the tool.\nUse\tthe tool.\n';
    const r = one(skill, { op: 'replace', target: 'Use the tool.', content: 'Use the API.' });
    expect(r.report[0]!.status).toBe('ambiguous_target');
    expect(r.report[0]!.reason).toMatch(/2 places/);
    expect(r.skill).toBe(skill);
  });

  it('reports missing and unmatched targets', () => {
    const r = applyEdits(BODY, [
      { op: 'replace', content: 'x' },
      { op: 'delete', target: '   ' },
      { op: 'replace', target: 'no such text', content: 'x' },
      { op: 'delete', target: 'Cite the pages' },
    ]);
    expect(r.report.map((x) => x.status)).toEqual([
      'missing_target',
      'missing_target',
      'unmatched_target',
      'unmatched_target',
    ]);
    expect(r.skill).toBe(BODY);
  });

  it('skips a target whose first occurrence is inside a protected region', () => {
    const r = one(WITH_REGIONS, { op: 'delete', target: 'Check units.' });
    expect(r.report[0]!.status).toBe('skipped_protected_region');
    expect(r.skill).toBe(WITH_REGIONS);
    const marker = one(WITH_REGIONS, { op: 'replace', target: SLOW_UPDATE_START, content: '' });
    expect(marker.report[0]!.status).toBe('skipped_protected_region');
  });

  it('reverts a replace whose target straddles a region marker (byte-for-byte check)', () => {
    const straddle = `Return JSON.\n\n${SLOW_UPDATE_START}\nPrefer`;
    expect(WITH_REGIONS.includes(straddle)).toBe(true);
    const r = one(WITH_REGIONS, { op: 'replace', target: straddle, content: 'Return JSON.' });
    expect(r.report[0]!.status).toBe('skipped_protected_region');
    expect(r.report[0]!.reason).toMatch(/reverted/);
    expect(r.skill).toBe(WITH_REGIONS);
    const d = one(WITH_REGIONS, { op: 'delete', target: `JSON.\n\n${SLOW_UPDATE_START}` });
    expect(d.report[0]!.status).toBe('skipped_protected_region');
    expect(d.skill).toBe(WITH_REGIONS);
  });

  it('reverts a normalised match that straddles a region', () => {
    const r = one(WITH_REGIONS, { op: 'delete', target: `Return   JSON. ${SLOW_UPDATE_START}` });
    expect(r.report[0]!.status).toBe('skipped_protected_region');
    expect(r.skill).toBe(WITH_REGIONS);
  });
});

describe('applyEdits', () => {
  it('applies sequentially: each edit sees the previous result', () => {
    const r = applyEdits(BODY, [
      { op: 'append', content: '## Notes\n- first' },
      { op: 'insert_after', target: '- first', content: '- second' },
      { op: 'replace', target: '- second', content: '- 2nd' },
      { op: 'delete', target: '- first\n' },
    ]);
    expect(r.skill).toBe(`${BODY}\n## Notes\n- 2nd\n`);
    expect(r.summary).toEqual({ total: 4, applied: 4, skipped: 0, errors: 0 });
  });

  it('marks unknown ops and keeps going', () => {
    const r = applyEdits(BODY, [{ op: 'rewrite' } as unknown as Edit, { op: 'append', content: 'x' }]);
    expect(r.report.map((x) => x.status)).toEqual(['skipped_unknown_op', 'applied_append']);
    expect(r.report[0]!.reason).toMatch(/unknown op "rewrite"/);
    expect(unmatchedEdits(r.report)).toEqual([]);
  });

  it('turns an exception into an error row and leaves the skill unchanged', () => {
    const bad = {
      op: 'replace',
      get target(): string {
        throw new Error('boom');
      },
    } as unknown as Edit;
    const r = applyEdits(BODY, [bad, { op: 'append', content: 'x' }]);
    expect(r.report[0]).toMatchObject({ index: 1, status: 'error', reason: 'boom' });
    expect(r.summary).toEqual({ total: 2, applied: 1, skipped: 0, errors: 1 });
    expect(r.skill).toBe(`${BODY}\nx\n`);
  });

  it('truncates target and content previews to 200 characters', () => {
    const long = 'y'.repeat(500);
    const r = applyEdits(BODY, [{ op: 'replace', target: long, content: long }]);
    expect(r.report[0]!.target).toHaveLength(200);
    expect(r.report[0]!.content_preview).toHaveLength(200);
  });

  it('never changes protected region bytes, whatever the edits', () => {
    const edits: Edit[] = [
      { op: 'append', content: `${APPENDIX_START} fake ${APPENDIX_END}` },
      { op: 'replace', target: 'Check units.', content: 'x' },
      { op: 'replace', target: `${APPENDIX_END}\n`, content: '' },
      { op: 'delete', target: `Prefer exact quotes.\n${SLOW_UPDATE_END}` },
      { op: 'insert_after', target: '## Execution Notes Appendix', content: '- injected' },
      { op: 'replace', target: 'Return JSON.', content: 'Return JSON only.' },
    ];
    const r = applyEdits(WITH_REGIONS, edits);
    expect(regionTexts(r.skill)).toEqual(regionTexts(WITH_REGIONS));
    expect(r.report.map((x) => x.status)).toEqual([
      'applied_append_before_protected_region',
      'skipped_protected_region',
      'skipped_protected_region',
      'skipped_protected_region',
      'skipped_protected_region',
      'applied_replace',
    ]);
  });

  it('applyEdit reports the given index', () => {
    expect(applyEdit(BODY, { op: 'append', content: 'z' }, 7).row.index).toBe(7);
  });
});

describe('findNormalizedMatches', () => {
  it('matches whitespace runs loosely and counts overlapping matches', () => {
    expect(findNormalizedMatches('a  b\nc', 'a b c')).toEqual([{ start: 0, end: 6 }]);
    expect(findNormalizedMatches('x x x', 'x x')).toHaveLength(2);
    expect(findNormalizedMatches('a.b', 'a.b')).toHaveLength(1);
    expect(findNormalizedMatches('axb', 'a.b')).toHaveLength(0);
    expect(findNormalizedMatches('abc', '   ')).toEqual([]);
  });
});
