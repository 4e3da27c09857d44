/**
 * The simulated analyst learns procedure steps (docs/simulated-model.md, "The simulated analyst"): a
 * missing call in a failure's feedback becomes a call rule on the input's most predictive token, its
 * arguments generalized to placeholders; a wrong-arguments finding becomes a replace of the rule that made
 * the call; its noise knobs apply, deterministic per minibatch; the rewrite, full rewrite and merge keep
 * call rules. Through the real SDK against the simulated server where the wire matters.
 */
import { describe, expect, it } from 'vitest';
import {
  budgetSection,
  jsonSection,
  skillSection,
  trajectoriesSection,
  type Trajectory,
} from '../../src/protocol/prompt.ts';
import { STAGE_SCHEMAS } from '../../src/protocol/schemas.ts';
import { formatCallFinding } from '../../src/protocol/tool-feedback.ts';
import { describeItem } from '../../src/optimizer/patch.ts';
import { renderStepBuffer } from '../../src/optimizer/step-buffer.ts';
import { parseCallRuleLine, parseCallRules } from '../../src/sim/call-rules.ts';
import { applyCallRuleLines, generalizeCallArgs } from '../../src/sim/analyst-calls.ts';
import { rulesOfListedEdit } from '../../src/sim/context.ts';
import { analystError, mostCommonWord } from '../../src/sim/analyst.ts';
import { PLAIN_SIM_KNOBS } from '../../src/sim/knobs.ts';
import { applyEdit } from '../../src/skill/edits.ts';
import { callStage, PLAIN, simServer, stagePrompt } from './helpers.ts';

const SKILL = '# Repo operator\nReport the command you ran.\n';
const SMOKE = '- When the input mentions `smoke`, call `run_command` with `{"cmd":"python train.py"}`.';

function traj(id: string, input: string, feedback: string[], output = 'done'): Trajectory {
  return {
    id,
    input,
    output,
    expected: null,
    score: { hard: 0, soft: 0.3 },
    feedback: ['tool calls: 0/1', ...feedback].join('\n'),
  };
}

const missing = (name: string, args: unknown) => formatCallFinding({ kind: 'missing', name, args });

/** Two failures that never read the log the input names; one that failed for another reason. */
const LOG_FAILURES = [
  traj('t1', 'The training crashed, see the traceback in logs/run-1.txt please.', [
    missing('read_file', { path: 'logs/run-1.txt' }),
  ]),
  traj('t2', 'Why did it stop? The traceback is in outputs/exp2/train.log.', [
    missing('read_file', { path: 'outputs/exp2/train.log' }),
  ]),
  traj('t3', 'Where is the best skill of the run?', [missing('list_dir', { path: 'outputs' })]),
];

const KNOBS = { ...PLAIN_SIM_KNOBS, seed: 7, model: 'mitko' };

function prompt(skill: string, trajectories: Trajectory[], ...context: (string | null)[]) {
  return stagePrompt(
    'analyst_error',
    skillSection(skill),
    budgetSection(4),
    ...context,
    trajectoriesSection(trajectories),
  );
}

describe('the simulated analyst proposes call rules', async () => {
  const { client } = await simServer(PLAIN);
  const edits = async (skill: string, trajectories: Trajectory[], ...context: (string | null)[]) =>
    STAGE_SCHEMAS.analyst_error.parse(await callStage(client, 'analyst_error', prompt(skill, trajectories, ...context)))
      .patch.edits;

  it("a missing call becomes a call rule on the predictive token, the input's path as <path>", async () => {
    const got = await edits(SKILL, LOG_FAILURES);
    const rules = got.map((e) => ({ op: e.op, support: e.support_count, rule: parseCallRuleLine(e.content ?? '') }));
    const read = rules.find((r) => r.rule?.tool === 'read_file')!;
    expect(read.op).toBe('append');
    expect(read.rule).toEqual({
      triggers: ['traceback'],
      source: 'input',
      tool: 'read_file',
      args: { path: '<path>' },
    });
    expect(read.support).toBe(2); // both log failures name it, the third does not
    // the literal path of the third failure is not the input's first path: it stays as written
    const list = rules.find((r) => r.rule?.tool === 'list_dir')!;
    expect(list.rule!.args).toEqual({ path: 'outputs' });
    expect(rules[0]!.rule!.tool).toBe('read_file'); // ordered by support
  });

  it('the learned rule, applied, makes the target call with the path of an input it never saw', async () => {
    const rule = (await edits(SKILL, LOG_FAILURES)).find(
      (e) => parseCallRuleLine(e.content ?? '')?.tool === 'read_file',
    )!;
    const skill = applyEdit(SKILL, { op: 'append', content: rule.content! }).skill;
    const tools = ['read_file', 'list_dir'].map((name) => ({
      type: 'function' as const,
      function: { name, parameters: { type: 'object', properties: {} } },
    }));
    const r = await client.chat.completions.create({
      model: 'mitko',
      messages: [
        { role: 'system', content: skill },
        { role: 'user', content: 'It died again; the traceback is in runs/7/stderr.txt.' },
      ],
      tools,
      tool_choice: 'auto',
    });
    const calls = (r.choices[0]!.message.tool_calls ?? []).map((c) =>
      c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : null,
    );
    expect(calls).toEqual([['read_file', { path: 'runs/7/stderr.txt' }]]);
  });

  it('wrong arguments become a replace of the rule that made the call, its triggers kept', async () => {
    const skill = `${SKILL}${SMOKE}\n`;
    const fb = formatCallFinding({
      kind: 'wrong',
      name: 'run_command',
      args: { cmd: 'python train.py' },
      expected: { cmd: 'python train.py --smoke --config configs/local.yaml' },
    });
    const got = await edits(skill, [traj('w1', 'Run a quick smoke training on the local model.', [fb])]);
    expect(got).toEqual([
      {
        op: 'replace',
        target: SMOKE,
        content:
          '- When the input mentions `smoke`, call `run_command` with `{"cmd":"python train.py --smoke --config configs/local.yaml"}`.',
        support_count: 1,
        source_type: 'failure',
      },
    ]);
  });

  it('an out-of-order call moves its rule after the rule of the call it must follow', async () => {
    const list = '- When the input mentions `smoke`, call `list_dir` with `{"path":"outputs"}`.';
    const skill = `${SKILL}${list}\n${SMOKE}\nReport last.\n`;
    const fb = formatCallFinding({ kind: 'order', name: 'list_dir', args: { path: 'outputs' }, after: 'run_command' });
    const got = await edits(skill, [traj('o1', 'Run a smoke test, then show me the outputs.', [fb])]);
    expect(got).toEqual([
      {
        op: 'replace',
        target: `${list}\n${SMOKE}`,
        content: `${SMOKE}\n${list}`,
        support_count: 1,
        source_type: 'failure',
      },
    ]);
    const full = analystError(
      prompt(skill, [traj('o1', 'Run a smoke test, then show me the outputs.', [fb])]),
      'full_rewrite',
      KNOBS,
    ).patch as { skill_candidates: Array<{ new_skill: string }> };
    expect(full.skill_candidates[0]!.new_skill).toBe(`${SKILL}${SMOKE}\n${list}\nReport last.\n`);
  });

  it('an extra call narrows the rule that made it (its trigger in the input dropped), or deletes a one-trigger rule', async () => {
    const broad = '- When the input mentions `smoke` or `report`, call `run_command` with `{"cmd":"python train.py"}`.';
    const fb = formatCallFinding({ kind: 'extra', name: 'run_command', args: { cmd: 'python train.py' } });
    const t = traj('x1', 'Write a report of the last run.', [fb]);
    expect(await edits(`${SKILL}${broad}\n`, [t])).toEqual([
      { op: 'replace', target: broad, content: SMOKE, support_count: 1, source_type: 'failure' },
    ]);
    const only = '- When the input mentions `report`, call `run_command` with `{"cmd":"python train.py"}`.';
    expect(await edits(`${SKILL}${only}\n`, [t])).toEqual([
      { op: 'delete', target: only, support_count: 1, source_type: 'failure' },
    ]);
    // rewrite mode: a remove_rule suggestion the rewrite applies
    const rewrite = analystError(prompt(`${SKILL}${broad}\n`, [t]), 'rewrite', KNOBS).patch as {
      revise_suggestions: Array<{ type: string; instruction: string }>;
    };
    expect(rewrite.revise_suggestions.map((x) => x.type)).toEqual(['remove_rule']);
    const user = stagePrompt(
      'rewrite_skill',
      skillSection(`${SKILL}${broad}\n`),
      jsonSection('suggestions', rewrite.revise_suggestions),
    );
    expect(STAGE_SCHEMAS.rewrite_skill.parse(await callStage(client, 'rewrite_skill', user)).new_skill).toBe(
      `${SKILL}${SMOKE}\n`,
    );
  });

  it('a missing call the skill already makes for the input is noise: nothing proposed; a rejected call rule is not proposed again', async () => {
    const rule = '- When the input mentions `traceback`, call `read_file` with `{"path":"<path>"}`.';
    expect((await edits(`${SKILL}${rule}\n`, LOG_FAILURES.slice(0, 2))).length).toBe(0);
    const buffer = renderStepBuffer([
      {
        step: 1,
        epoch: 1,
        action: 'reject',
        n_total: 3,
        n_fail: 3,
        failure_patterns: [],
        rejected_edits: [describeItem({ op: 'append', content: rule })],
        score_before: 0.5,
        score_after: 0.4,
      },
    ]);
    const again = await edits(SKILL, LOG_FAILURES.slice(0, 2), buffer);
    expect(again.map((e) => parseCallRuleLine(e.content ?? '')?.triggers[0])).not.toContain('traceback');
  });
});

describe('the rejected-edit buffer names call rules by triggers and tool', () => {
  it('even when the listing cuts the arguments short', () => {
    const long = `- When the input mentions \`smoke\` or \`quick\`, call \`run_command\` with \`{"cmd":"python -m skillopt.train --config <path> ${'--cfg-options a=1 '.repeat(10)}"}\`.`;
    const listed = describeItem({ op: 'append', content: long });
    expect(listed).toMatch(/…"$/);
    expect(rulesOfListedEdit(listed)).toEqual([
      { trigger: 'smoke', answer: 'call run_command' },
      { trigger: 'quick', answer: 'call run_command' },
    ]);
  });
});

describe('generalizeCallArgs', () => {
  it('whole values and word-bounded tokens inside a command become placeholders, only when filling gives the value back', () => {
    const input = 'Run a smoke training with configs/local.yaml for 2 epochs, ticket OPS-12.';
    expect(
      generalizeCallArgs(
        {
          cmd: 'python -m skillopt.train --config configs/local.yaml --epochs 2',
          ticket: 'OPS-12',
          path: 'configs/local.yaml',
        },
        input,
      ),
    ).toEqual({
      cmd: 'python -m skillopt.train --config <path> --epochs <number>',
      ticket: '<id>',
      path: '<path>',
    });
    // a token that is only part of a word stays, and so does a value the input does not name
    expect(generalizeCallArgs({ cmd: 'ls configs/local.yaml.bak', n: 'v2' }, input)).toEqual({
      cmd: 'ls configs/local.yaml.bak',
      n: 'v2',
    });
  });
});

describe('the noise knobs apply to call rules, deterministic per minibatch', () => {
  it('misread: a covered missing call is proposed on the next best token', () => {
    const rule = '- When the input mentions `traceback`, call `read_file` with `{"path":"<path>"}`.';
    const text = prompt(`${SKILL}${rule}\n`, LOG_FAILURES.slice(0, 2));
    const plain = analystError(text, 'patch', KNOBS).patch as { edits: unknown[] };
    expect(plain.edits).toHaveLength(0);
    const misread = analystError(text, 'patch', { ...KNOBS, analystMisreadRate: 1 }).patch as {
      edits: Array<{ content: string }>;
    };
    const got = misread.edits.map((e) => parseCallRuleLine(e.content));
    expect(got.length).toBeGreaterThan(0);
    expect(got.every((r) => r?.tool === 'read_file' && r.triggers[0] !== 'traceback')).toBe(true);
    expect(analystError(text, 'patch', { ...KNOBS, analystMisreadRate: 1 })).toEqual(
      analystError(text, 'patch', { ...KNOBS, analystMisreadRate: 1 }),
    );
  });

  it('error: the most frequent missing call keyed on the most common word', () => {
    const text = prompt(SKILL, LOG_FAILURES);
    const reply = analystError(text, 'patch', { ...KNOBS, analystErrorRate: 1 });
    const edits = (reply.patch as { edits: Array<{ content: string }> }).edits;
    expect(edits).toHaveLength(1);
    const r = parseCallRuleLine(edits[0]!.content)!;
    expect(r.tool).toBe('read_file');
    expect(r.triggers).toEqual([mostCommonWord(LOG_FAILURES)!.text]);
    expect(r.triggers).not.toEqual(['traceback']);
  });
});

describe('rewrite and full rewrite keep call rules', async () => {
  const { client } = await simServer(PLAIN);

  it("full rewrite: the candidate skill holds the call rule; rewrite: the suggestion's rule is integrated", async () => {
    const full = analystError(prompt(SKILL, LOG_FAILURES), 'full_rewrite', KNOBS).patch as {
      skill_candidates: Array<{ new_skill: string; change_summary: string[] }>;
    };
    const skill = full.skill_candidates[0]!.new_skill;
    expect(
      parseCallRules(skill)
        .map((r) => r.tool)
        .sort(),
    ).toEqual(['list_dir', 'read_file']);
    expect(full.skill_candidates[0]!.change_summary[0]).toMatch(/^Added call rule: /);

    const rewrite = analystError(prompt(SKILL, LOG_FAILURES), 'rewrite', KNOBS).patch as {
      revise_suggestions: Array<{ instruction: string }>;
    };
    const user = stagePrompt(
      'rewrite_skill',
      skillSection(`${SKILL}${SMOKE}\n`),
      jsonSection('suggestions', rewrite.revise_suggestions),
    );
    const out = STAGE_SCHEMAS.rewrite_skill.parse(await callStage(client, 'rewrite_skill', user));
    expect(parseCallRules(out.new_skill).map((r) => r.tool)).toEqual(['run_command', 'read_file', 'list_dir']);
  });

  it('applyCallRuleLines replaces the rule with the same triggers and tool, appends the others before the protected regions', () => {
    const skill = `${SKILL}${SMOKE}\n<!-- SLOW_UPDATE_START -->\nkeep\n<!-- SLOW_UPDATE_END -->\n`;
    const fixed = '- When the input mentions `smoke`, call `run_command` with `{"cmd":"python train.py --smoke"}`.';
    const added = '- If the result mentions `Traceback`, call `read_file` with `{"path":"<path>"}`.';
    const out = applyCallRuleLines(skill, [fixed, added, fixed]);
    expect(out.skill).toBe(
      `${SKILL}${fixed}\n\n${added}\n\n<!-- SLOW_UPDATE_START -->\nkeep\n<!-- SLOW_UPDATE_END -->\n`,
    );
    expect(out.changes).toHaveLength(2);
  });
});
