import { describe, expect, it } from 'vitest';
import {
  APPENDIX_END,
  APPENDIX_START,
  SLOW_UPDATE_END,
  SLOW_UPDATE_START,
  addAppendixNotes,
  appendixNotes,
  dedupeNotes,
  ensureAppendix,
  extractSlowUpdate,
  hasAppendix,
  hasSlowUpdate,
  injectEmptySlowUpdate,
  isInProtectedRegion,
  noteKey,
  protectedSpans,
  regionTexts,
  replaceSlowUpdate,
  stripMarkers,
  stripProtected,
} from '../../src/skill/regions.ts';

const BODY = '# Skill\n\n- rule one\n- rule two\n';
const SLOW_EMPTY = `${SLOW_UPDATE_START}\n${SLOW_UPDATE_END}\n`;
const APPENDIX_EMPTY = `${APPENDIX_START}\n## Execution Notes Appendix\n${APPENDIX_END}\n`;

describe('slow-update region', () => {
  it('injects an empty region idempotently', () => {
    const once = injectEmptySlowUpdate(BODY);
    expect(once).toBe(`# Skill\n\n- rule one\n- rule two\n\n${SLOW_EMPTY}`);
    expect(injectEmptySlowUpdate(once)).toBe(once);
    expect(hasSlowUpdate(once)).toBe(true);
    expect(hasSlowUpdate(BODY)).toBe(false);
    expect(extractSlowUpdate(once)).toBe('');
    expect(injectEmptySlowUpdate('')).toBe(SLOW_EMPTY);
  });

  it('replaces content with exactly one fresh block at the end', () => {
    const s1 = replaceSlowUpdate(injectEmptySlowUpdate(BODY), '  Prefer X over Y.\n');
    expect(s1).toBe(`${BODY}\n${SLOW_UPDATE_START}\nPrefer X over Y.\n${SLOW_UPDATE_END}\n`);
    expect(extractSlowUpdate(s1)).toBe('Prefer X over Y.');
    const s2 = replaceSlowUpdate(s1, 'Newer guidance.');
    expect(s2.split(SLOW_UPDATE_START)).toHaveLength(2);
    expect(extractSlowUpdate(s2)).toBe('Newer guidance.');
    expect(replaceSlowUpdate(s2, '')).toBe(injectEmptySlowUpdate(BODY));
  });

  it('strips every pair and orphan marker, collapses blank lines and rstrips', () => {
    const messy = `# Skill\n\n${SLOW_UPDATE_START}\nold 1\n${SLOW_UPDATE_END}\n\n\n\n- rule\n${SLOW_UPDATE_END}\nmore\n${SLOW_UPDATE_START}\nold 2\n${SLOW_UPDATE_END}\n\n${SLOW_UPDATE_START} dangling\n\n\n`;
    const out = replaceSlowUpdate(messy, 'fresh');
    expect(out).toBe(`# Skill\n\n- rule\n\nmore\n\n dangling\n\n${SLOW_UPDATE_START}\nfresh\n${SLOW_UPDATE_END}\n`);
    // An orphan-only skill is repaired by inject.
    expect(injectEmptySlowUpdate(`${BODY}${SLOW_UPDATE_END}\n`)).toBe(`${BODY}\n${SLOW_EMPTY}`);
  });

  it('removes marker strings from the content written into the region', () => {
    const out = replaceSlowUpdate(BODY, `a ${SLOW_UPDATE_END} b ${APPENDIX_START}`);
    expect(extractSlowUpdate(out)).toBe('a  b');
    expect(protectedSpans(out)).toHaveLength(1);
  });

  it('never changes the bytes of an appendix region while rewriting the slow update', () => {
    const withAppendix = addAppendixNotes(injectEmptySlowUpdate(BODY), ['keep\n\n\nthis']);
    const appendixBefore = regionTexts(withAppendix).find((t) => t.startsWith(APPENDIX_START));
    const out = replaceSlowUpdate(withAppendix, 'guidance\n\n\n\nwith gaps');
    expect(regionTexts(out).find((t) => t.startsWith(APPENDIX_START))).toBe(appendixBefore);
    expect(extractSlowUpdate(out)).toBe('guidance\n\n\n\nwith gaps');
  });
});

describe('protected spans', () => {
  const skill = `${BODY}\n${SLOW_UPDATE_START}\nguide\n${SLOW_UPDATE_END}\n\n${APPENDIX_START}\n## Execution Notes Appendix\n- n1\n${APPENDIX_END}\n`;

  it('lists every region from start marker to end marker inclusive', () => {
    const spans = protectedSpans(skill);
    expect(spans.map((s) => [s.kind, s.orphan])).toEqual([
      ['slow_update', false],
      ['appendix', false],
    ]);
    expect(regionTexts(skill)).toEqual([
      `${SLOW_UPDATE_START}\nguide\n${SLOW_UPDATE_END}`,
      `${APPENDIX_START}\n## Execution Notes Appendix\n- n1\n${APPENDIX_END}`,
    ]);
    expect(isInProtectedRegion(skill, skill.indexOf('guide'))).toBe(true);
    expect(isInProtectedRegion(skill, skill.indexOf('rule one'))).toBe(false);
    expect(isInProtectedRegion(skill, skill.indexOf(SLOW_UPDATE_END) + SLOW_UPDATE_END.length)).toBe(false);
  });

  it('protects orphan markers themselves', () => {
    const s = `a\n${SLOW_UPDATE_END}\nb\n${APPENDIX_START}\nc\n`;
    expect(regionTexts(s)).toEqual([SLOW_UPDATE_END, APPENDIX_START]);
    expect(protectedSpans(s).every((x) => x.orphan)).toBe(true);
  });

  it('handles multiple regions of one kind', () => {
    const s = `${SLOW_UPDATE_START}\n1\n${SLOW_UPDATE_END}\nx\n${SLOW_UPDATE_START}\n2\n${SLOW_UPDATE_END}\n`;
    expect(regionTexts(s)).toHaveLength(2);
  });

  it('stripProtected returns the body only', () => {
    expect(stripProtected(skill)).toBe(BODY.trimEnd());
    expect(stripProtected(`a\n${SLOW_UPDATE_START}\nx\n${SLOW_UPDATE_END}\n\n\nb\n`)).toBe('a\n\nb');
  });

  it('stripMarkers removes every marker string', () => {
    expect(stripMarkers(`x${SLOW_UPDATE_START}y${SLOW_UPDATE_END}z${APPENDIX_START}${APPENDIX_END}`)).toBe('xyz');
  });
});

describe('appendix region', () => {
  it('ensures an empty appendix idempotently', () => {
    const once = ensureAppendix(BODY);
    expect(once).toBe(`${BODY}\n${APPENDIX_EMPTY}`);
    expect(ensureAppendix(once)).toBe(once);
    expect(hasAppendix(once)).toBe(true);
    expect(appendixNotes(once)).toEqual([]);
  });

  it('adds notes with order-preserving dedup (whitespace, trailing punctuation, case)', () => {
    const s1 = addAppendixNotes(ensureAppendix(BODY), ['Check units before answering.', '  Always   cite the page ']);
    expect(s1).toBe(
      `${BODY}\n${APPENDIX_START}\n## Execution Notes Appendix\n- Check units before answering.\n- Always cite the page\n${APPENDIX_END}\n`,
    );
    const s2 = addAppendixNotes(s1, ['check UNITS before answering', 'always cite the page;', 'New note -', '', '   ']);
    expect(appendixNotes(s2)).toEqual(['Check units before answering.', 'Always cite the page', 'New note -']);
    expect(addAppendixNotes(s2, ['NEW NOTE'])).toBe(s2);
  });

  it('creates the region when missing and keeps the slow-update region bytes', () => {
    const base = replaceSlowUpdate(BODY, 'guide');
    const out = addAppendixNotes(base, ['n1']);
    expect(regionTexts(out)[0]).toBe(regionTexts(base)[0]);
    expect(out.endsWith(`- n1\n${APPENDIX_END}\n`)).toBe(true);
    expect(protectedSpans(out).map((s) => s.kind)).toEqual(['slow_update', 'appendix']);
  });

  it('parses bullets leniently and strips markers from notes', () => {
    const s = `${APPENDIX_START}\n# Execution Notes Appendix\n* star note\n-dash note\n- normal\n\nplain\n${APPENDIX_END}\n`;
    expect(appendixNotes(s)).toEqual(['star note', 'dash note', 'normal', 'plain']);
    const out = addAppendixNotes(BODY, [`evil ${APPENDIX_END} note`]);
    expect(appendixNotes(out)).toEqual(['evil note']);
    expect(protectedSpans(out)).toHaveLength(1);
  });

  it('noteKey / dedupeNotes', () => {
    expect(noteKey('  Hello,\n  World.;: ')).toBe('hello, world');
    expect(noteKey('Straße')).toBe(noteKey('STRASSE'));
    expect(dedupeNotes(['A', 'a.', ' b ', 'B', 'c'])).toEqual(['A', 'b', 'c']);
  });
});

describe('setAppendixNotes', () => {
  it('replaces the notes (deduplicated) and keeps the body and other regions', async () => {
    const { setAppendixNotes, appendixNotes, addAppendixNotes, injectEmptySlowUpdate, regionTexts } = await import(
      '../../src/skill/regions.ts'
    );
    const skill = addAppendixNotes(injectEmptySlowUpdate('# S\n\nbody\n'), ['one', 'two', 'three']);
    const slow = regionTexts(skill).find((r) => r.includes('SLOW_UPDATE'));
    const out = setAppendixNotes(skill, ['merged note', 'Merged note.']);
    expect(appendixNotes(out)).toEqual(['merged note']);
    expect(out.startsWith('# S\n\nbody\n')).toBe(true);
    expect(regionTexts(out)).toContain(slow);
    expect(setAppendixNotes(out, ['merged note'])).toBe(out);
  });
});
