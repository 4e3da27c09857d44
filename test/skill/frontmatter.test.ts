/**
 * SKILL.md frontmatter (issue 14): the format's rules, each violation one line naming the file and the rule;
 * the folder-name match only for files named SKILL.md; a description rewrite that changes no other byte; and
 * the block protected from the optimizer's edits and rewrites.
 */
import { describe, expect, it } from 'vitest';
import {
  checkSkillFile,
  frontmatterBlock,
  parseSkill,
  replaceDescription,
  SkillFormatError,
  skillBody,
} from '../../src/skill/frontmatter.ts';
import { applyEdits } from '../../src/skill/edits.ts';
import { protectedSpans, replaceSlowUpdate, stripProtected } from '../../src/skill/regions.ts';
import { enforceProtected } from '../../src/optimizer/update.ts';

const doc = (fm: string, body = '# Body\n\n- rule\n') => `---\n${fm}\n---\n\n${body}`;
const GOOD = doc(
  'name: dotnet-debugging\ndescription: Finds the root cause of .NET bugs. Use it when C# code fails.\nlicense: MIT\nmetadata:\n  version: "1"',
);
const PATH = '/skills/dotnet-debugging/SKILL.md';

function error(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SkillFormatError);
    const m = (e as Error).message;
    expect(m).not.toContain('\n');
    return m;
  }
  throw new Error('expected a SkillFormatError');
}

describe('the rules of a SKILL.md', () => {
  it('a valid SKILL.md parses: fields, body, block', () => {
    const p = parseSkill(PATH, GOOD);
    expect(p.frontmatter).toMatchObject({ name: 'dotnet-debugging', license: 'MIT', metadata: { version: '1' } });
    expect(skillBody(GOOD)).toBe('# Body\n\n- rule\n');
    expect(GOOD.slice(0, frontmatterBlock(GOOD)!.end).endsWith('---\n')).toBe(true);
  });

  it('name: lowercase letters, digits and hyphens, no edge or double hyphen, at most 64, the folder name', () => {
    const named = (name: string, path = `/skills/${name}/SKILL.md`) =>
      error(() => parseSkill(path, doc(`name: ${name}\ndescription: d`)));
    expect(named('Dotnet_Debugging')).toBe(
      "/skills/Dotnet_Debugging/SKILL.md: frontmatter 'name' 'Dotnet_Debugging' may contain only lowercase letters, digits and '-' (found 'D', '_')",
    );
    expect(named('-dotnet')).toMatch(/must not start or end with '-'$/);
    expect(named('dotnet--debug')).toMatch(/must not contain '--'$/);
    expect(named('a'.repeat(65))).toMatch(/'name' is 65 characters; the limit is 64$/);
    expect(named('dotnet', '/skills/other/SKILL.md')).toBe(
      "/skills/other/SKILL.md: frontmatter 'name' 'dotnet' must match the folder name 'other'",
    );
  });

  it('description: required, non-empty, at most 1,024 characters', () => {
    expect(error(() => parseSkill(PATH, doc(`name: dotnet-debugging\ndescription: ${'x'.repeat(1100)}`)))).toBe(
      `${PATH}: frontmatter 'description' is 1100 characters; the limit is 1024`,
    );
    expect(error(() => parseSkill(PATH, doc('name: dotnet-debugging')))).toBe(
      `${PATH}: frontmatter field 'description' is required`,
    );
    expect(error(() => parseSkill(PATH, doc('name: dotnet-debugging\ndescription: "  "')))).toMatch(
      /'description' must not be empty$/,
    );
  });

  it('optional fields and unknown ones', () => {
    const with_ = (extra: string) =>
      error(() => parseSkill(PATH, doc(`name: dotnet-debugging\ndescription: d\n${extra}`)));
    expect(with_(`compatibility: ${'y'.repeat(501)}`)).toMatch(/'compatibility' is 501 characters; the limit is 500$/);
    expect(with_('metadata: [a, b]')).toMatch(/'metadata' must be a key–value map$/);
    expect(with_('allowed-tools: 3')).toMatch(/'allowed-tools' must be a string or a list of strings$/);
    expect(with_('author: me')).toMatch(
      /unknown frontmatter field 'author' \(allowed: name, description, license, compatibility, metadata, allowed-tools\)$/,
    );
    expect(
      parseSkill(PATH, doc('name: dotnet-debugging\ndescription: d\nallowed-tools: [Read, Bash]')).frontmatter[
        'allowed-tools'
      ],
    ).toEqual(['Read', 'Bash']);
  });

  it('structure: missing, unclosed, not YAML, not a mapping', () => {
    expect(error(() => parseSkill(PATH, '# just markdown\n'))).toMatch(
      /^\/skills\/dotnet-debugging\/SKILL\.md: no frontmatter/,
    );
    expect(error(() => parseSkill(PATH, '---\nname: x\n'))).toMatch(/no closing '---' line$/);
    expect(error(() => parseSkill(PATH, doc('name: [unclosed')))).toMatch(/frontmatter is not valid YAML: /);
    expect(error(() => parseSkill(PATH, doc('- a\n- b')))).toMatch(/must be a YAML mapping/);
  });

  it('which files: SKILL.md gets every rule; another file with frontmatter all but the folder match; plain markdown none', () => {
    expect(error(() => checkSkillFile('/x/initial/SKILL.md', '# no frontmatter\n'))).toMatch(/no frontmatter/);
    const elsewhere = doc('name: dotnet-debugging\ndescription: d');
    expect(checkSkillFile('/out/run/best_skill.md', elsewhere)?.name).toBe('dotnet-debugging'); // folder 'run' not checked
    expect(error(() => checkSkillFile('/out/run/best_skill.md', doc('name: Bad_Name\ndescription: d')))).toMatch(
      /^\/out\/run\/best_skill\.md: frontmatter 'name'/,
    );
    expect(checkSkillFile('/skills/x/initial.md', '# plain skill\n')).toBeNull();
  });
});

describe('replaceDescription', () => {
  it('changes the description value and no other byte', () => {
    const next = replaceDescription(GOOD, 'Diagnoses .NET runtime failures: hangs, leaks and exceptions.');
    const before = GOOD.split('\n');
    const after = next.split('\n');
    expect(after.length).toBe(before.length);
    const changed = after.map((l, i) => (l === before[i] ? null : i)).filter((i) => i !== null);
    expect(changed).toEqual([2]);
    expect(after[2]).toBe('description: "Diagnoses .NET runtime failures: hangs, leaks and exceptions."'); // quoted: it holds ': '
    expect(parseSkill(PATH, next).frontmatter.description).toBe(
      'Diagnoses .NET runtime failures: hangs, leaks and exceptions.',
    );
    expect(replaceDescription(GOOD, 'Plain words only.').split('\n')[2]).toBe('description: Plain words only.');
  });

  it('a folded multi-line description becomes one line; the fields after it stay', () => {
    const folded = doc('name: dotnet-debugging\ndescription: >-\n  Finds bugs\n  in .NET.\n\nlicense: MIT');
    const next = replaceDescription(folded, 'New text.');
    expect(next).toBe(doc('name: dotnet-debugging\ndescription: New text.\n\nlicense: MIT'));
  });

  it('refuses a description past the limit, naming the rule', () => {
    expect(error(() => replaceDescription(GOOD, 'y'.repeat(1025), PATH))).toBe(
      `${PATH}: frontmatter 'description' is 1025 characters; the limit is 1024`,
    );
  });
});

describe('the frontmatter is a protected region', () => {
  const fmEnd = frontmatterBlock(GOOD)!.end;

  it('is a span at the head, and body-only text leaves it out', () => {
    expect(protectedSpans(GOOD)[0]).toEqual({ kind: 'frontmatter', start: 0, end: fmEnd, orphan: false });
    expect(stripProtected(GOOD).trim()).toBe('# Body\n\n- rule');
  });

  it('edits cannot touch it; an append goes after the body, before a tail region', () => {
    const r = applyEdits(GOOD, [
      { op: 'replace', target: 'name: dotnet-debugging', content: 'name: hacked' },
      { op: 'delete', target: 'license: MIT' },
      { op: 'append', content: '- rule two' },
    ]);
    expect(r.report.map((x) => x.status)).toEqual([
      'skipped_protected_region',
      'skipped_protected_region',
      'applied_append',
    ]);
    expect(r.skill).toBe(`${GOOD.slice(0, fmEnd)}\n# Body\n\n- rule\n\n- rule two\n`);
    const tail = replaceSlowUpdate(GOOD, 'guidance');
    expect(applyEdits(tail, [{ op: 'append', content: '- rule three' }]).skill).toMatch(
      /^---\nname: dotnet-debugging[\s\S]*- rule\n\n- rule three\n\n<!-- SLOW_UPDATE_START -->/,
    );
  });

  it('a rewrite that drops or changes it gets it back at the head', () => {
    const rewritten = '# Body\n\n- better rule\n';
    const fixed = enforceProtected(GOOD, rewritten);
    expect(fixed.restored).toBe(true);
    expect(fixed.skill).toBe(`${GOOD.slice(0, fmEnd)}# Body\n\n- better rule\n`);
    const changed = enforceProtected(
      GOOD,
      GOOD.replace('license: MIT', 'license: GPL').replace('- rule', '- better rule'),
    );
    expect(changed.skill.startsWith(GOOD.slice(0, fmEnd))).toBe(true);
    expect(enforceProtected(GOOD, GOOD.replace('- rule', '- better rule'))).toEqual({
      skill: GOOD.replace('- rule', '- better rule'),
      restored: false,
    });
  });
});
