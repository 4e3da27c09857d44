import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import {
  budgetSection,
  jsonSection,
  skillSection,
  stageHeader,
  tag,
  trajectoriesSection,
  type Trajectory,
} from '../../src/protocol/prompt.ts';
import { STAGE_SCHEMAS, type StageName } from '../../src/protocol/schemas.ts';
import { parseRules } from '../../src/sim/rules.ts';
import { PLAIN, simServer } from './helpers.ts';

const SKILL = [
  '# .NET debugging',
  '- When the input mentions `NullReferenceException`, answer `null-ref`.',
  '',
  '<!-- SLOW_UPDATE_START -->',
  'Prefer specific rules.',
  '<!-- SLOW_UPDATE_END -->',
  '',
].join('\n');

function traj(id: string, input: string, expected: unknown, hard = 0): Trajectory {
  return {
    id,
    input,
    output: 'unknown',
    expected,
    score: { hard, soft: hard },
    feedback: hard ? 'ok' : 'wrong answer',
  };
}

/** Two failures share a CamelCase exception with the same answer; `handler` appears across answers. */
const FAILURES: Trajectory[] = [
  traj('t1', 'The handler throws ObjectDisposedException when the request completes.', 'disposed-object'),
  traj('t2', 'After disposal the stream throws ObjectDisposedException inside the handler.', 'disposed-object'),
  traj('t3', 'The handler hangs forever on task.Result during startup.', 'sync-over-async'),
];

function prompt(stage: string, ...sections: string[]): string {
  return [stageHeader(stage), ...sections].join('\n\n');
}

function analystPrompt(stage: string, skill: string, trajectories: Trajectory[], budget = 4): string {
  return prompt(stage, skillSection(skill), budgetSection(budget), trajectoriesSection(trajectories));
}

async function call(client: OpenAI, stage: string, user: string, structured = true): Promise<unknown> {
  const r = await client.chat.completions.create({
    model: 'mitko',
    messages: [
      { role: 'system', content: `You are the SkillOpt ${stage} optimizer.` },
      { role: 'user', content: user },
    ],
    ...(structured
      ? {
          response_format: {
            type: 'json_schema' as const,
            json_schema: { name: stage, schema: { type: 'object' }, strict: true },
          },
        }
      : {}),
  });
  return JSON.parse(r.choices[0]!.message.content ?? 'null');
}

const APPEND_ODE = '- When the input mentions `ObjectDisposedException`, answer `disposed-object`.';
const APPEND_TR = '- When the input mentions `task.Result`, answer `sync-over-async`.';

describe('simulated analyst', async () => {
  const { client, server } = await simServer({ ...PLAIN, models: ['mitko'] });

  it('picks the predictive token: the shared type name, not the word common to other answers', async () => {
    const out = STAGE_SCHEMAS.analyst_error.parse(
      await call(client, 'analyst_error', analystPrompt('analyst_error', SKILL, FAILURES)),
    );
    expect(out.batch_size).toBe(3);
    expect(out.patch.edits).toEqual([
      { op: 'append', content: APPEND_ODE, support_count: 2, source_type: 'failure' },
      { op: 'append', content: APPEND_TR, support_count: 1, source_type: 'failure' },
    ]);
    expect(out.failure_summary.map((f) => [f.failure_type, f.count])).toEqual([
      ['rule_missing', 2],
      ['rule_missing', 1],
    ]);
  });

  it('caps the proposals at the edit budget L, keeping the best supported', async () => {
    const out = STAGE_SCHEMAS.analyst_error.parse(
      await call(client, 'analyst_error', analystPrompt('analyst_error', SKILL, FAILURES, 1)),
    );
    expect(out.patch.edits.map((e) => e.content)).toEqual([APPEND_ODE]);
    const none = STAGE_SCHEMAS.analyst_error.parse(
      await call(client, 'analyst_error', analystPrompt('analyst_error', SKILL, FAILURES, 0)),
    );
    expect(none.patch.edits).toEqual([]);
  });

  it('proposes a replace when the token is a trigger with another answer, and skips tokens already covered', async () => {
    const wrong = '- When the input mentions `ObjectDisposedException`, answer `null-ref`.';
    const skill = `# S\n${wrong}\n- \`task.Result\` → \`sync-over-async\`\n`;
    const out = STAGE_SCHEMAS.analyst_error.parse(
      await call(client, 'analyst_error', analystPrompt('analyst_error', skill, FAILURES)),
    );
    expect(out.patch.edits[0]).toEqual({
      op: 'replace',
      target: wrong,
      content: APPEND_ODE,
      support_count: 2,
      source_type: 'failure',
    });
    // t3 is a noisy trajectory: the skill's `task.Result` rule already gives its answer, so nothing is proposed for it
    expect(out.patch.edits).toHaveLength(1);
    expect(out.failure_summary[0]!.failure_type).toBe('rule_wrong');
  });

  it('keeps the other triggers of a rule it replaces', async () => {
    const line = '- `ObjectDisposedException` or `ODE` → `null-ref`';
    const out = STAGE_SCHEMAS.analyst_error.parse(
      await call(client, 'analyst_error', analystPrompt('analyst_error', `# S\n${line}\n`, FAILURES)),
    );
    expect(out.patch.edits[0]).toMatchObject({
      op: 'replace',
      target: line,
      content: `- When the input mentions \`ODE\`, answer \`null-ref\`.\n${APPEND_ODE}`,
    });
  });

  it('skips successes inside a failure minibatch, and a success minibatch proposes nothing', async () => {
    const mixed = [...FAILURES, traj('s1', 'The handler throws ObjectDisposedException again.', 'something-else', 1)];
    const out = STAGE_SCHEMAS.analyst_error.parse(
      await call(client, 'analyst_error', analystPrompt('analyst_error', SKILL, mixed)),
    );
    expect(out.patch.edits.map((e) => e.content)).toEqual([APPEND_ODE, APPEND_TR]);
    for (const stage of ['analyst_success', 'analyst_success_rewrite', 'analyst_success_full_rewrite'] as const) {
      const succ = STAGE_SCHEMAS[stage].parse(
        await call(
          client,
          stage,
          analystPrompt(
            stage,
            SKILL,
            FAILURES.map((t) => ({ ...t, score: { hard: 1, soft: 1 } })),
          ),
        ),
      );
      expect(Object.values(succ.patch).find(Array.isArray)).toEqual([]);
      expect(succ.batch_size).toBe(3);
    }
  });

  it('rewrite variants: add_rule suggestions and one full candidate skill with rules before the protected region', async () => {
    const rw = STAGE_SCHEMAS.analyst_error_rewrite.parse(
      await call(client, 'analyst_error_rewrite', analystPrompt('analyst_error_rewrite', SKILL, FAILURES)),
    );
    expect(rw.patch.revise_suggestions.map((s) => [s.type, s.instruction, s.support_count])).toEqual([
      ['add_rule', APPEND_ODE, 2],
      ['add_rule', APPEND_TR, 1],
    ]);
    const full = STAGE_SCHEMAS.analyst_error_full_rewrite.parse(
      await call(client, 'analyst_error_full_rewrite', analystPrompt('analyst_error_full_rewrite', SKILL, FAILURES)),
    );
    expect(full.patch.skill_candidates).toHaveLength(1);
    const newSkill = full.patch.skill_candidates[0]!.new_skill;
    expect(newSkill).toBe(SKILL.replace('\n<!-- SLOW', `\n${APPEND_ODE}\n${APPEND_TR}\n\n<!-- SLOW`));
  });

  it('recognises the stage from the header line when no response_format is sent (JSON mode / plain text)', async () => {
    server.resetStats();
    const out = STAGE_SCHEMAS.analyst_error.parse(
      await call(client, 'analyst_error', analystPrompt('analyst_error', SKILL, FAILURES), false),
    );
    expect(out.patch.edits).toHaveLength(2);
    const r = await client.chat.completions.create({
      model: 'mitko',
      messages: [
        {
          role: 'user',
          content: prompt(
            'ranking',
            jsonSection('edit_pool', [{ support_count: 1 }, { support_count: 2 }]),
            budgetSection(1),
          ),
        },
      ],
      response_format: { type: 'json_object' },
    });
    expect(JSON.parse(r.choices[0]!.message.content!)).toMatchObject({ selected_indices: [1] });
    expect(server.stats().byStage).toEqual({ analyst_error: 1, ranking: 1 });
  });
});

describe('analyst_error_rate', async () => {
  const a = await simServer({ ...PLAIN, analystErrorRate: 1, seed: 3 });
  const b = await simServer({ ...PLAIN, analystErrorRate: 1, seed: 3 });
  const zero = await simServer({ ...PLAIN, analystErrorRate: 0, seed: 3 });

  it('proposes a rule on the most common word, deterministically; rate 0 never does', async () => {
    const user = analystPrompt('analyst_error', SKILL, FAILURES);
    const bad = STAGE_SCHEMAS.analyst_error.parse(await call(a.client, 'analyst_error', user));
    expect(bad.patch.edits).toEqual([
      {
        op: 'append',
        content: '- When the input mentions `handler`, answer `disposed-object`.',
        support_count: 2,
        source_type: 'failure',
      },
    ]);
    expect(await call(b.client, 'analyst_error', user)).toEqual(bad);
    const good = STAGE_SCHEMAS.analyst_error.parse(await call(zero.client, 'analyst_error', user));
    expect(good.patch.edits[0]!.content).toBe(APPEND_ODE);
  });

  it('at an intermediate rate some requests err and the same request always gets the same reply', async () => {
    const mid = await import('../../src/sim/server.ts').then((m) =>
      m.startSimServer({ ...PLAIN, analystErrorRate: 0.5, seed: 7 }),
    );
    try {
      const { default: OpenAI } = await import('openai');
      const client = new OpenAI({ apiKey: 'sk-simulated', baseURL: mid.url, maxRetries: 0 });
      const users = Array.from({ length: 16 }, (_, i) =>
        analystPrompt('analyst_error', `${SKILL}\n<!-- variant ${i} -->`, FAILURES),
      );
      const first = await Promise.all(users.map((u) => call(client, 'analyst_error', u)));
      const second = await Promise.all([...users].reverse().map((u) => call(client, 'analyst_error', u)));
      expect(second.reverse()).toEqual(first);
      const erred = first.filter((o) => JSON.stringify(o).includes('`handler`')).length;
      expect(erred).toBeGreaterThan(0);
      expect(erred).toBeLessThan(16);
    } finally {
      await mid.close();
    }
  });
});

describe('merge, ranking, learning rate, rewrite, judge', async () => {
  const { client } = await simServer(PLAIN);
  const e1 = { op: 'append', content: APPEND_ODE, support_count: 2, source_type: 'failure' };
  const e1ws = { op: 'append', content: `  ${APPEND_ODE.replace(' answer', '   answer')}\n`, support_count: 1 };
  const e2 = { op: 'append', content: APPEND_TR, support_count: 1, source_type: 'failure' };
  const e3 = { op: 'append', content: '- `Deadlock` → `deadlock`', support_count: 4, source_type: 'success' };

  it('merge dedupes (whitespace-normalised), sums support and sorts by support, stable', async () => {
    const out = STAGE_SCHEMAS.merge_failure.parse(
      await call(
        client,
        'merge_failure',
        prompt(
          'merge_failure',
          skillSection(SKILL),
          jsonSection('patches', [{ edits: [e2, e1] }, { reasoning: 'x', edits: [e1ws] }]),
        ),
      ),
    );
    expect(out.edits).toEqual([
      { op: 'append', content: APPEND_ODE, support_count: 3, source_type: 'failure' },
      { op: 'append', content: APPEND_TR, support_count: 1, source_type: 'failure' },
    ]);
  });

  it('merge_final reads failure patches first, then success patches', async () => {
    const out = STAGE_SCHEMAS.merge_final.parse(
      await call(
        client,
        'merge_final',
        prompt(
          'merge_final',
          skillSection(SKILL),
          jsonSection('failure_patches', [{ edits: [e2] }]),
          jsonSection('success_patches', [{ edits: [{ ...e2, support_count: 1 }, e3] }]),
        ),
      ),
    );
    expect(out.edits.map((e) => [e.content, e.support_count, e.source_type])).toEqual([
      [e3.content, 4, 'success'],
      [APPEND_TR, 2, 'failure'],
    ]);
  });

  it('full-rewrite merge keeps the candidate with the most rules', async () => {
    const small = { title: 'one', change_summary: ['a'], new_skill: '- `A` → `a`\n', support_count: 1 };
    const big = { title: 'two', change_summary: ['b'], new_skill: '- `A` → `a`\n- `B` → `b`\n', support_count: 2 };
    const out = STAGE_SCHEMAS.merge_failure_full_rewrite.parse(
      await call(
        client,
        'merge_failure_full_rewrite',
        prompt(
          'merge_failure_full_rewrite',
          skillSection(SKILL),
          jsonSection('patches', [{ skill_candidates: [small] }, { skill_candidates: [big] }]),
        ),
      ),
    );
    expect(out.skill_candidates).toHaveLength(1);
    expect(out.skill_candidates[0]).toMatchObject({
      title: 'two',
      new_skill: big.new_skill,
      support_count: 3,
      change_summary: ['a', 'b'],
    });
  });

  it('ranking selects the k best supported indices, stable; lr_autonomous counts support >= 2', async () => {
    const pool = [{ ...e2 }, { ...e1, support_count: 3 }, { ...e3, support_count: 2 }, { ...e1ws, support_count: 3 }];
    const r = STAGE_SCHEMAS.ranking.parse(
      await call(
        client,
        'ranking',
        prompt('ranking', skillSection(SKILL), jsonSection('edit_pool', pool), budgetSection(2)),
      ),
    );
    expect(r.selected_indices).toEqual([1, 3]);
    const all = STAGE_SCHEMAS.ranking_rewrite.parse(
      await call(
        client,
        'ranking_rewrite',
        prompt('ranking_rewrite', jsonSection('edit_pool', pool), budgetSection(10)),
      ),
    );
    expect(all.selected_indices).toEqual([1, 3, 2, 0]);
    const lr = STAGE_SCHEMAS.lr_autonomous.parse(
      await call(client, 'lr_autonomous', prompt('lr_autonomous', jsonSection('edit_pool', pool))),
    );
    expect(lr.learning_rate).toBe(3);
    const lr1 = STAGE_SCHEMAS.lr_autonomous.parse(
      await call(client, 'lr_autonomous', prompt('lr_autonomous', jsonSection('edit_pool', [e2]))),
    );
    expect(lr1.learning_rate).toBe(1);
    const lr0 = STAGE_SCHEMAS.lr_autonomous.parse(
      await call(client, 'lr_autonomous', prompt('lr_autonomous', jsonSection('edit_pool', []))),
    );
    expect(lr0.learning_rate).toBe(0);
  });

  it('rewrite_skill appends the suggested rules before protected regions', async () => {
    const suggestions = [
      { type: 'add_rule', title: 't', motivation: '', instruction: APPEND_ODE, priority_hint: 'high' },
      { type: 'clarify', title: 'u', motivation: '', instruction: 'Be concise.', priority_hint: 'low' },
    ];
    const out = STAGE_SCHEMAS.rewrite_skill.parse(
      await call(
        client,
        'rewrite_skill',
        prompt('rewrite_skill', skillSection(SKILL), jsonSection('suggestions', suggestions)),
      ),
    );
    expect(out.new_skill).toBe(SKILL.replace('\n<!-- SLOW', `\n${APPEND_ODE}\n\n<!-- SLOW`));
    expect(out.change_summary).toEqual([`Added rule: ${APPEND_ODE}`]);
  });

  it('appendix_consolidate dedupes notes', async () => {
    const notes = [
      'Check the stack trace first.',
      'check  the stack trace first',
      { note: 'Read the logs' },
      'Read the logs!',
    ];
    const out = STAGE_SCHEMAS.appendix_consolidate.parse(
      await call(client, 'appendix_consolidate', prompt('appendix_consolidate', jsonSection('appendix_notes', notes))),
    );
    expect(out.appendix_notes).toEqual(['Check the stack trace first.', 'Read the logs']);
  });

  it('judge passes when the normalised expected text occurs in the output', async () => {
    const j = async (expected: unknown, output: string) =>
      STAGE_SCHEMAS.judge.parse(
        await call(client, 'judge', prompt('judge', jsonSection('expected', expected), tag('output', output))),
      );
    expect(await j('Disposed-Object', 'The root cause:\n  disposed-object.')).toMatchObject({ score: 1, pass: true });
    expect(await j('Disposed  Object', 'the cause is disposed object')).toMatchObject({ score: 1, pass: true });
    expect(await j('deadlock', 'disposed-object')).toMatchObject({ score: 0, pass: false });
    expect(await j({ a: 1 }, 'returns {"A":1} here')).toMatchObject({ score: 1, pass: true });
    const plain = STAGE_SCHEMAS.judge.parse(
      await call(client, 'judge', prompt('judge', tag('expected', 'FOO'), tag('output', 'a foo b'))),
    );
    expect(plain.pass).toBe(true);
  });

  it('slow_update and meta_skill give short deterministic text (no backticks in the guidance)', async () => {
    const s = STAGE_SCHEMAS.slow_update.parse(
      await call(client, 'slow_update', prompt('slow_update', skillSection(SKILL))),
    );
    expect(s.slow_update_content).not.toContain('`');
    expect(parseRules(s.slow_update_content)).toEqual([]);
    const m = STAGE_SCHEMAS.meta_skill.parse(
      await call(client, 'meta_skill', prompt('meta_skill', skillSection(SKILL))),
    );
    expect(m.meta_skill_content.length).toBeGreaterThan(0);
  });
});

describe('every stage', async () => {
  const { client } = await simServer();
  const pool = [
    { op: 'append', content: APPEND_ODE, support_count: 2 },
    { op: 'append', content: APPEND_TR, support_count: 1 },
  ];
  const suggestion = {
    type: 'add_rule',
    title: 't',
    motivation: 'm',
    instruction: APPEND_ODE,
    priority_hint: 'high',
    support_count: 2,
  };
  const candidate = { title: 'c', change_summary: ['x'], new_skill: `${SKILL}\n${APPEND_ODE}\n`, support_count: 1 };
  const patches = [{ edits: pool, revise_suggestions: [suggestion], skill_candidates: [candidate] }];
  const user = (stage: string) =>
    prompt(
      stage,
      skillSection(SKILL),
      budgetSection(2),
      trajectoriesSection(
        stage.startsWith('analyst_success') ? FAILURES.map((t) => ({ ...t, score: { hard: 1, soft: 1 } })) : FAILURES,
      ),
      jsonSection('patches', patches),
      jsonSection('failure_patches', patches),
      jsonSection('success_patches', patches),
      jsonSection('edit_pool', pool),
      jsonSection('suggestions', [suggestion]),
      jsonSection('appendix_notes', ['a note', 'A note.']),
      jsonSection('expected', 'disposed-object'),
      tag('output', 'disposed-object'),
    );

  it.each(Object.keys(STAGE_SCHEMAS) as StageName[])(
    '%s: structured and JSON-mode replies validate against its schema',
    async (stage) => {
      const structured = await call(client, stage, user(stage));
      const parsed = STAGE_SCHEMAS[stage].safeParse(structured);
      expect(parsed.success, parsed.success ? '' : parsed.error.message).toBe(true);
      expect(await call(client, stage, user(stage), false)).toEqual(structured);
    },
  );
});
