/** Scorer options are checked when the scorer is made (at suite load): a typo or a wrong type names its key. */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  exactMatch,
  includesAll,
  includesAny,
  jsonSchema,
  label,
  llmJudge,
  numeric,
  regex,
  threshold,
  weighted,
  ScorerError,
} from '../../src/suite/scorers/index.ts';

describe('scorer options', () => {
  test('an unknown key is an error naming it, the closest known key and the list', () => {
    const bad = { normalise: false } as never;
    expect(() => exactMatch(bad)).toThrow(ScorerError);
    expect(() => exactMatch(bad)).toThrow(
      'scorer exact_match: unknown option `normalise` (did you mean `normalize`?) — its options are `normalize`, `expected`, `name`',
    );
    expect(() => numeric({ tolerence: 0.1 } as never)).toThrow(
      /scorer numeric: unknown option `tolerence` \(did you mean `tolerance`\?\)/,
    );
    expect(() => label({ labels: ['a'], alias: {} } as never)).toThrow(
      /scorer label: unknown option `alias` \(did you mean `aliases`\?\)/,
    );
    expect(() => includesAll(['a'], { caseSensitiv: true } as never)).toThrow(/unknown option `caseSensitiv`/);
    expect(() => includesAny(['a'], { case_sensitive: true } as never)).toThrow(
      /scorer includes_any: unknown option `case_sensitive`/,
    );
    expect(() => regex('a', { flag: 'i' } as never)).toThrow(/unknown option `flag` \(did you mean `flags`\?\)/);
    expect(() => jsonSchema(z.object({}), { normalizeString: false } as never)).toThrow(
      /did you mean `normalizeStrings`/,
    );
    expect(() => llmJudge({ rubric: 'r', treshold: 0.5 } as never)).toThrow(/did you mean `threshold`/);
    expect(() => weighted([{ scorer: regex('a'), wieght: 1 } as never])).toThrow(
      /unknown component 1 key `wieght` \(did you mean `weight`\?\)/,
    );
    expect(() => threshold(regex('a'), 0.5, { nmae: 'x' } as never)).toThrow(
      /unknown option `nmae` \(did you mean `name`\?\)/,
    );
  });

  test('a value of the wrong type names its key', () => {
    expect(() => numeric({ tolerance: '0.1' } as never)).toThrow(
      /scorer numeric: option `tolerance`: expected number, received string/,
    );
    expect(() => numeric({ pick: 'middle' } as never)).toThrow(/option `pick`/);
    expect(() => exactMatch({ normalize: 'yes' } as never)).toThrow(
      /option `normalize`: expected a boolean or a function/,
    );
    expect(() => label({ labels: 'a' } as never)).toThrow(/scorer label: option `labels`: expected array/);
    expect(() => exactMatch('x' as never)).toThrow(/options must be an object/);
    expect(() => jsonSchema({} as never)).toThrow(/first argument must be a zod schema/);
  });

  test('valid options, functions of the task included, pass', () => {
    expect(() =>
      exactMatch({ normalize: (s) => s.trim(), expected: (t) => String(t.expected), name: 'x' }),
    ).not.toThrow();
    expect(() => numeric({ tolerance: 0.1, relative: true, pick: 'first', percentAsFraction: true })).not.toThrow();
    expect(() => label({ labels: ['a', 'b'], aliases: { a: ['alpha'] } })).not.toThrow();
    expect(() => llmJudge({ rubric: () => 'r', threshold: 0.7 })).not.toThrow();
    expect(() => weighted([{ scorer: regex('a'), weight: 1 }], { threshold: 0.5 })).not.toThrow();
  });
});
