/**
 * The simulated optimizer uses its context (world v2): the rejected-edit buffer, meta-skill and
 * slow-update notes, noisy trajectories, and a ranker of finite accuracy. The prompts are built with the
 * optimizer's own renderers (step buffer, comparison), so the sim is checked against the wire it reads.
 */
import { describe, expect, it } from 'vitest';
import {
  budgetSection,
  jsonSection,
  skillSection,
  tag,
  trajectoriesSection,
  type Trajectory,
} from '../../src/protocol/prompt.ts';
import { STAGE_SCHEMAS } from '../../src/protocol/schemas.ts';
import { describeItem } from '../../src/optimizer/patch.ts';
import { renderStepBuffer } from '../../src/optimizer/step-buffer.ts';
import { renderComparison, type ComparisonPair } from '../../src/optimizer/longitudinal.ts';
import { flaggedTerms, rejectedRules, rulesOfListedEdit } from '../../src/sim/context.ts';
import { rankIndices } from '../../src/sim/ranking.ts';
import { parseRules } from '../../src/sim/rules.ts';
import { callStage, PLAIN, simServer, stagePrompt } from './helpers.ts';

const SKILL = '# .NET debugging\nName the root cause.\n';
const ODE = '- When the input mentions `ObjectDisposedException`, answer `disposed-object`.';
const TR = '- When the input mentions `task.Result`, answer `sync-over-async`.';
const HANDLER = '- When the input mentions `handler`, answer `disposed-object`.';
const GENERAL = '- When the input mentions `handler`, answer `async-void`.';

function traj(id: string, input: string, expected: string, output = 'unknown'): Trajectory {
  return { id, input, output, expected, score: { hard: 0, soft: 0 }, feedback: 'wrong answer' };
}

const FAILURES = [
  traj('t1', 'The handler throws ObjectDisposedException when the request completes.', 'disposed-object'),
  traj('t2', 'After disposal the stream throws ObjectDisposedException inside the handler.', 'disposed-object'),
  traj('t3', 'The handler hangs forever on task.Result during startup.', 'sync-over-async'),
];

/** The step buffer the engine writes after a step whose candidate carried `edits` was rejected. */
function buffer(...edits: { op: 'append'; content: string }[]): string {
  return renderStepBuffer([
    {
      step: 1,
      epoch: 1,
      action: 'reject',
      n_total: 8,
      n_fail: 3,
      failure_patterns: [],
      rejected_edits: edits.map(describeItem),
      score_before: 0.5,
      score_after: 0.4,
    },
  ])!;
}

const META = (note: string) =>
  tag(
    'meta_skill',
    `Optimizer memory from earlier epochs (not part of the skill; use it to judge which edits help):\n${note}`,
  );

async function analyst(
  client: Parameters<typeof callStage>[0],
  skill: string,
  trajectories: Trajectory[],
  ...context: (string | null)[]
) {
  const user = stagePrompt(
    'analyst_error',
    skillSection(skill),
    budgetSection(4),
    ...context,
    trajectoriesSection(trajectories),
  );
  return STAGE_SCHEMAS.analyst_error.parse(await callStage(client, 'analyst_error', user)).patch.edits;
}

const contents = (edits: { content?: string }[]) => edits.map((e) => e.content);

describe('the context parsers read what the engine writes', () => {
  it('rejected rules: appends, a folded two-line replace, a suggestion; not the old target of a replace', () => {
    const text = renderStepBuffer([
      {
        step: 2,
        epoch: 1,
        action: 'reject',
        n_total: 8,
        n_fail: 3,
        failure_patterns: [{ pattern: 'rule_missing', description: 'x', count: 2 }],
        rejected_edits: [
          describeItem({ op: 'append', content: ODE }),
          describeItem({
            op: 'replace',
            target: GENERAL,
            content: `- When the input mentions \`ODE\`, answer \`null-ref\`.\n${TR}`,
          }),
          describeItem({
            type: 'add_rule',
            title: 't',
            motivation: '',
            instruction: '- `Foo` → `{"team":"auth"}`',
            priority_hint: 'high',
          }),
          '(not evaluated: too long)',
        ],
        score_before: 0.5,
        score_after: 0.5,
      },
    ])!;
    expect(rejectedRules(text)).toEqual([
      { trigger: 'objectdisposedexception', answer: 'disposed-object' },
      { trigger: 'ode', answer: 'null-ref' },
      { trigger: 'task.result', answer: 'sync-over-async' },
      { trigger: 'foo', answer: '{"team":"auth"}' },
    ]);
    expect(rejectedRules(stagePrompt('analyst_error', skillSection(ODE)))).toEqual([]);
    expect(rulesOfListedEdit('delete target="x"')).toEqual([]);
  });

  it('flagged terms: backticked terms on warning lines only', () => {
    expect(
      flaggedTerms('Rules on `Foo` helped.\nAvoid rules keyed on `orders`, `Select`.\nDo not rely on `handler` alone.'),
    ).toEqual(['orders', 'select', 'handler']);
  });
});

describe('the rejected-edit buffer', async () => {
  const { client } = await simServer({ ...PLAIN });
  const forgetful = await simServer({ ...PLAIN, analystContextRecall: 0 });
  const erring = await simServer({ ...PLAIN, analystErrorRate: 1 });

  it('without it the analyst re-proposes a rejected edit; with it, it does not', async () => {
    expect(contents(await analyst(client, SKILL, FAILURES))).toEqual([ODE, TR]);
    expect(contents(await analyst(client, SKILL, FAILURES, buffer({ op: 'append', content: TR })))).toEqual([ODE]);
    // recall 0: the buffer is in the prompt but not heeded
    expect(contents(await analyst(forgetful.client, SKILL, FAILURES, buffer({ op: 'append', content: TR })))).toEqual([
      ODE,
      TR,
    ]);
  });

  it('an erring analyst repeats a rejected common-word rule without it, and does not make that mistake with it', async () => {
    expect(contents(await analyst(erring.client, SKILL, FAILURES))).toEqual([HANDLER]);
    expect(contents(await analyst(erring.client, SKILL, FAILURES, buffer({ op: 'append', content: HANDLER })))).toEqual(
      [ODE, TR],
    );
  });
});

describe('meta-skill and slow-update notes', async () => {
  const always = await simServer({ ...PLAIN, analystErrorRate: 1, analystNotesEffect: 1 });
  const half = await simServer({ ...PLAIN, analystErrorRate: 0.6, analystNotesEffect: 0.5 });
  const { client } = await simServer({ ...PLAIN });

  it('notes in the prompt cut the error rate (by analyst_notes_effect): meta skill or slow-update guidance', async () => {
    expect(contents(await analyst(always.client, SKILL, FAILURES))).toEqual([HANDLER]);
    expect(contents(await analyst(always.client, SKILL, FAILURES, META('Keep edits specific.')))).toEqual([ODE, TR]);
    const withSlow = `${SKILL}\n<!-- SLOW_UPDATE_START -->\nPrefer the most specific rule.\n<!-- SLOW_UPDATE_END -->\n`;
    expect(contents(await analyst(always.client, withSlow, FAILURES))).toEqual([ODE, TR]);
    // an empty slow-update region (the epoch-1 placeholder) is no note
    const placeholder = `${SKILL}\n<!-- SLOW_UPDATE_START -->\n<!-- SLOW_UPDATE_END -->\n`;
    expect(contents(await analyst(always.client, placeholder, FAILURES))).toEqual([HANDLER]);
  });

  it('at a partial effect the errors with notes are a subset of those without (one draw per minibatch)', async () => {
    const skills = Array.from({ length: 32 }, (_, i) => `${SKILL}<!-- variant ${i} -->\n`);
    const erred = async (...context: string[]) =>
      (await Promise.all(skills.map((s) => analyst(half.client, s, FAILURES, ...context)))).flatMap((edits, i) =>
        contents(edits).includes(HANDLER) ? [i] : [],
      );
    const without = await erred();
    const withNotes = await erred(META('Keep edits specific.'));
    expect(without.length).toBeGreaterThanOrEqual(12);
    expect(without.length).toBeLessThanOrEqual(26);
    expect(withNotes.length).toBeLessThan(without.length);
    expect(withNotes.every((i) => without.includes(i))).toBe(true);
  });

  it('a trigger the notes warn against is not proposed: the next best token is', async () => {
    const edits = contents(
      await analyst(
        client,
        SKILL,
        FAILURES,
        META('Avoid rules keyed on `ObjectDisposedException`: they fired on tasks of other causes.'),
      ),
    );
    expect(edits).not.toContain(ODE);
    expect(edits).toContain('- When the input mentions `throws`, answer `disposed-object`.');
  });
});

describe('noisy trajectories (the skill already gives the expected answer)', async () => {
  const careful = await simServer({ ...PLAIN });
  const misreading = await simServer({ ...PLAIN, analystMisreadRate: 1 });
  const skill = `${SKILL}${ODE}\n${GENERAL}\n`;
  const noisy = traj(
    'n1',
    'The handler throws ObjectDisposedException when the request completes.',
    'disposed-object',
    'unknown',
  );
  const captured = traj(
    'c1',
    'The handler throws ObjectDisposedException when the request completes.',
    'disposed-object',
    'async-void',
  );

  it('read right: nothing for a noisy failure; narrowing the rule that captured one', async () => {
    expect(await analyst(careful.client, skill, [noisy])).toEqual([]);
    expect(await analyst(careful.client, skill, [captured])).toEqual([
      { op: 'delete', target: GENERAL, support_count: 1, source_type: 'failure' },
    ]);
    const shared = `${SKILL}${ODE}\n- \`handler\` or \`Callback\` → \`async-void\`\n`;
    expect(await analyst(careful.client, shared, [captured])).toEqual([
      {
        op: 'replace',
        target: '- `handler` or `Callback` → `async-void`',
        content: '- When the input mentions `Callback`, answer `async-void`.',
        support_count: 1,
        source_type: 'failure',
      },
    ]);
  });

  it('misread: a wrong rule on another token of the input', async () => {
    const edits = await analyst(misreading.client, skill, [noisy]);
    expect(edits).toHaveLength(1);
    expect(edits[0]!.op).toBe('append');
    expect(parseRules(edits[0]!.content!)[0]!.triggers).not.toContain('ObjectDisposedException');
    expect(parseRules(edits[0]!.content!)[0]!.answer).toBe('disposed-object');
  });

  it('rewrite modes carry the narrowing: a remove_rule suggestion the rewrite applies; a candidate without the rule', async () => {
    const rw = STAGE_SCHEMAS.analyst_error_rewrite.parse(
      await callStage(
        careful.client,
        'analyst_error_rewrite',
        stagePrompt('analyst_error_rewrite', skillSection(skill), budgetSection(4), trajectoriesSection([captured])),
      ),
    );
    expect(rw.patch.revise_suggestions.map((s) => s.type)).toEqual(['remove_rule']);
    const out = STAGE_SCHEMAS.rewrite_skill.parse(
      await callStage(
        careful.client,
        'rewrite_skill',
        stagePrompt('rewrite_skill', skillSection(skill), jsonSection('suggestions', rw.patch.revise_suggestions)),
      ),
    );
    expect(out.new_skill).toBe(`${SKILL}${ODE}\n`);
    const full = STAGE_SCHEMAS.analyst_error_full_rewrite.parse(
      await callStage(
        careful.client,
        'analyst_error_full_rewrite',
        stagePrompt(
          'analyst_error_full_rewrite',
          skillSection(skill),
          budgetSection(4),
          trajectoriesSection([captured]),
        ),
      ),
    );
    expect(full.patch.skill_candidates[0]!.new_skill).toBe(`${SKILL}${ODE}\n`);
  });
});

describe('slow update and meta skill write what captured other causes; the analyst heeds it', async () => {
  const { client } = await simServer({ ...PLAIN });
  const skill = `${SKILL}${ODE}\n${GENERAL}\n`;
  const side = (output: string, hard: number) => ({ output, hard, soft: hard, feedback: '' });
  const pairs: ComparisonPair[] = [
    {
      id: 'a',
      category: 'regressed',
      input: 'The handler throws ObjectDisposedException.',
      expected: 'disposed-object',
      prev: side('disposed-object', 1),
      curr: side('async-void', 0),
    },
    {
      id: 'b',
      category: 'improved',
      input: 'async void handler crashes',
      expected: 'async-void',
      prev: side('unknown', 0),
      curr: side('async-void', 1),
    },
    {
      id: 'c',
      category: 'stable_success',
      input: 'ObjectDisposedException',
      expected: 'disposed-object',
      prev: side('disposed-object', 1),
      curr: side('disposed-object', 1),
    },
  ];

  it('the warning names the capturing trigger, keeps earlier ones, and is no rule line', async () => {
    const slow = STAGE_SCHEMAS.slow_update.parse(
      await callStage(
        client,
        'slow_update',
        stagePrompt(
          'slow_update',
          tag('previous_skill', SKILL),
          skillSection(skill),
          tag('previous_guidance', 'none'),
          renderComparison(pairs),
        ),
      ),
    ).slow_update_content;
    expect(flaggedTerms(slow)).toEqual(['handler']);
    expect(parseRules(slow)).toEqual([]);
    const meta = STAGE_SCHEMAS.meta_skill.parse(
      await callStage(
        client,
        'meta_skill',
        stagePrompt(
          'meta_skill',
          tag('previous_skill', SKILL),
          skillSection(skill),
          tag('previous_meta_skill', 'Avoid rules keyed on `orders`.'),
          renderComparison(pairs),
        ),
      ),
    ).meta_skill_content;
    expect(flaggedTerms(meta)).toEqual(['handler', 'orders']);
    expect(parseRules(meta)).toEqual([]);
    // the analyst that reads this memory does not propose `handler` again
    const proposeHandler = [
      traj('h1', 'the handler is gone', 'async-void'),
      traj('h2', 'the handler returned early', 'async-void'),
    ];
    expect(contents(await analyst(client, SKILL, proposeHandler))).toEqual([
      '- When the input mentions `handler`, answer `async-void`.',
    ]);
    expect(contents(await analyst(client, SKILL, proposeHandler, META(meta)))).not.toContain(
      '- When the input mentions `handler`, answer `async-void`.',
    );
  });

  it('without captures: the fixed guidance and no backticks', async () => {
    const slow = STAGE_SCHEMAS.slow_update.parse(
      await callStage(client, 'slow_update', stagePrompt('slow_update', skillSection(skill))),
    ).slow_update_content;
    expect(slow).not.toContain('`');
  });
});

describe('ranking with finite accuracy', async () => {
  const pool = (n: number, salt: number) =>
    Array.from({ length: n }, (_, i) => ({ op: 'append', content: `rule ${salt}-${i}`, support_count: n - i }));
  const knobs = (rankerAccuracy: number) => ({ seed: 0, model: 'mitko', rankerAccuracy });

  it('accuracy 1 is the stable sort by support; accuracy 0 never picks the best item left first', () => {
    expect(rankIndices(pool(5, 0), 3, knobs(1))).toEqual([0, 1, 2]);
    expect(rankIndices(pool(5, 0), 3)).toEqual([0, 1, 2]);
    const slips = rankIndices(pool(5, 0), 3, knobs(0));
    expect(slips).toHaveLength(3);
    expect(new Set(slips).size).toBe(3);
    expect(slips[0]).not.toBe(0);
    expect(rankIndices(pool(5, 0), 3, knobs(0))).toEqual(slips);
  });

  it('at 0.8 about one first pick in five is not the best supported item', () => {
    const wrong = Array.from({ length: 200 }, (_, s) => rankIndices(pool(6, s), 2, knobs(0.8))[0]).filter(
      (i) => i !== 0,
    ).length;
    expect(wrong).toBeGreaterThanOrEqual(25);
    expect(wrong).toBeLessThanOrEqual(55);
  });

  it('through the server: the same pool gets the same selection', async () => {
    const { client } = await simServer({ ...PLAIN, rankerAccuracy: 0.5 });
    const user = stagePrompt(
      'ranking',
      jsonSection(
        'edit_pool',
        pool(8, 1).map((p, index) => ({ index, ...p })),
      ),
      budgetSection(3),
    );
    const first = STAGE_SCHEMAS.ranking.parse(await callStage(client, 'ranking', user)).selected_indices;
    expect(first).toHaveLength(3);
    expect(STAGE_SCHEMAS.ranking.parse(await callStage(client, 'ranking', user)).selected_indices).toEqual(first);
  });
});

describe('the success analyst generalizes a rule that worked (analyst_generalize)', () => {
  const SSO = '- When the input mentions `SAMLResponse`, answer `auth-p1`.';
  const ok = (id: string, input: string, expected: string) => ({
    ...traj(id, input, expected, expected),
    score: { hard: 1, soft: 1 },
    feedback: '',
  });
  const successes = [
    ok('s1', 'Login fails: the SAMLResponse from IdPMetadata is rejected for everyone.', 'auth-p1'),
    ok('s2', 'Since the IdPMetadata rotation every SAMLResponse is refused.', 'auth-p1'),
    ok('s3', 'The checkout page is slow but works.', 'payments-p2'),
  ];

  it('proposes the identifier two successes of the answer share, with support 0 (ranked after every failure rule)', async () => {
    const { generalizeSuccesses } = await import('../../src/sim/analyst.ts');
    const p = generalizeSuccesses(`${SKILL}${SSO}\n`, successes, 2);
    expect(p.map((x) => [x.token, x.answer, x.support])).toEqual([['IdPMetadata', 'auth-p1', 0]]);
    expect(p[0]!.content).toBe('- When the input mentions `IdPMetadata`, answer `auth-p1`.');
  });

  it('needs the evidence: one success is not enough at 2, a token another answer shares is never proposed, 0 turns it off', async () => {
    const { generalizeSuccesses } = await import('../../src/sim/analyst.ts');
    expect(generalizeSuccesses(`${SKILL}${SSO}\n`, successes.slice(0, 1), 2)).toEqual([]);
    expect(generalizeSuccesses(`${SKILL}${SSO}\n`, successes.slice(0, 1), 1).map((x) => x.token)).toEqual([
      'IdPMetadata',
    ]);
    const shared = [...successes, ok('s4', 'IdPMetadata export for the payments-p2 audit.', 'payments-p2')];
    expect(generalizeSuccesses(`${SKILL}${SSO}\n`, shared, 2)).toEqual([]);
    expect(generalizeSuccesses(`${SKILL}${SSO}\n`, successes, 0)).toEqual([]);
    // a success no rule explains (answered right by chance) teaches nothing
    expect(generalizeSuccesses(SKILL, successes, 1)).toEqual([]);
  });
});
