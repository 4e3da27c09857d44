/**
 * The simulated analyst of a run over several models (docs/simulated-model.md#several-models): it reads the
 * per-model labels the optimizer writes (optimizer/model-labels.ts), and for a failure on one model only
 * whose attention budget the skill exceeds it proposes a compression (one `replace` built by the compress
 * stage's merges) instead of a rule; `analyst_budget_compress` is its probability, 0 turns it off. The same
 * minibatch without labels gets the reply it always got.
 */
import { describe, expect, it } from 'vitest';
import { budgetSection, skillSection, trajectoriesSection, type Trajectory } from '../../src/protocol/prompt.ts';
import { STAGE_SCHEMAS } from '../../src/protocol/schemas.ts';
import { applyEdits } from '../../src/skill/edits.ts';
import { compressionProposal, lengthFailures, overBudget } from '../../src/sim/analyst-budget.ts';
import { parseRules } from '../../src/sim/rules.ts';
import { SIM_PROFILES } from '../../src/sim/profiles.ts';
import { callStage, simServer, stagePrompt } from './helpers.ts';

const rule = (t: string, a: string) => `- When the input mentions \`${t}\`, answer \`${a}\`.`;
/** A skill of 14 rules over 4 answers: past sim-small's 12-rule budget, within sim-large's. */
const RULES = [
  rule('DiskFull', 'disk'),
  rule('ENOSPC', 'disk'),
  rule('QuotaExceeded', 'disk'),
  rule('InodeLimit', 'disk'),
  rule('ConnReset', 'network'),
  rule('ETIMEDOUT', 'network'),
  rule('DNSFail', 'network'),
  rule('PacketLoss', 'network'),
  rule('BadToken', 'auth'),
  rule('Expired', 'auth'),
  rule('Forbidden', 'auth'),
  rule('OOMKilled', 'memory'),
  rule('HeapFull', 'memory'),
  rule('SwapStorm', 'memory'),
];
const SKILL = `# Triage\nName the failing subsystem.\n\n${RULES.join('\n')}\n`;

const small = SIM_PROFILES['sim-small']!.knobs;
const large = SIM_PROFILES['sim-large']!.knobs;
const budget = (k: typeof small) => ({
  dilution: 0.5,
  dilutionRules: k.dilutionRules,
  dilutionChars: k.dilutionChars,
  maxRules: k.maxRules,
});

function failure(id: string, input: string, expected: string, failsOn: string, output = 'unknown'): Trajectory {
  return {
    id,
    input,
    output,
    expected,
    score: { hard: 0, soft: 0 },
    feedback: 'wrong answer',
    model: failsOn.split(' ')[0] === 'both' ? 'sim-small' : failsOn.split(' ')[0]!,
    fails_on: failsOn,
  };
}

const SMALL_ONLY = [
  failure('t1', 'Node a reported DiskFull in the log.', 'disk', 'sim-small only'),
  failure('t2', 'Node b reported ConnReset in the log.', 'network', 'sim-small only'),
];
/** Fails on both models: no rule maps `CertRevoked`. */
const BOTH = failure('t3', 'Node c reported CertRevoked in the log.', 'auth', 'both');

async function analyst(client: Parameters<typeof callStage>[0], skill: string, trajectories: Trajectory[]) {
  const user = stagePrompt('analyst_error', skillSection(skill), budgetSection(4), trajectoriesSection(trajectories));
  return STAGE_SCHEMAS.analyst_error.parse(await callStage(client, 'analyst_error', user));
}

describe('the budget the analyst reads', () => {
  it("14 rules exceed sim-small (12 rules) and not sim-large (120); a failure on sim-small only is the skill's length", () => {
    expect(overBudget(SKILL, budget(small), false)).toBe(true);
    expect(overBudget(SKILL, budget(large), false)).toBe(false);
    const of = (m: string) => (m === 'sim-small' ? budget(small) : m === 'sim-large' ? budget(large) : null);
    expect(lengthFailures(SKILL, [...SMALL_ONLY, BOTH], of).map((t) => t.id)).toEqual(['t1', 't2']);
    // on sim-large only: within its budget, not the length
    expect(lengthFailures(SKILL, [failure('t4', 'x DiskFull', 'disk', 'sim-large only')], of)).toEqual([]);
    // a model it knows nothing of
    expect(lengthFailures(SKILL, [failure('t5', 'x DiskFull', 'disk', 'small only')], of)).toEqual([]);
  });

  it("the compression is one replace of the rule lines: the compress stage's merges, what every rule answers unchanged", () => {
    const p = compressionProposal(SKILL, 2)!;
    expect(p).toMatchObject({ kind: 'compress', op: 'replace', support: 2 });
    const compressed = applyEdits(SKILL, [{ op: 'replace', target: p.target!, content: p.content }]).skill;
    expect(compressed).toBe(
      `# Triage\nName the failing subsystem.\n\n- \`DiskFull\`, \`ENOSPC\`, \`QuotaExceeded\`, \`InodeLimit\` → \`disk\`\n- \`ConnReset\`, \`ETIMEDOUT\`, \`DNSFail\`, \`PacketLoss\` → \`network\`\n- \`BadToken\`, \`Expired\`, \`Forbidden\` → \`auth\`\n- \`OOMKilled\`, \`HeapFull\`, \`SwapStorm\` → \`memory\`\n`,
    );
    expect(parseRules(compressed)).toHaveLength(4);
    // the same trigger → answer mappings
    const mappings = (s: string) =>
      parseRules(s)
        .flatMap((r) => r.triggers.map((t) => `${t}→${r.answer}`))
        .sort();
    expect(mappings(compressed)).toEqual(mappings(SKILL));
    // nothing left to merge
    expect(compressionProposal(compressed, 2)).toBeNull();
  });
});

describe('the simulated analyst over labelled failures', async () => {
  // the default world (sim-small's dilution on), with an analyst that never errs or misreads and always reads the labels
  const world = {
    analystErrorRate: 0,
    analystMisreadRate: 0,
    analystBudgetCompress: 1,
    models: ['mitko', 'sim-small', 'sim-large'],
  };
  const { client } = await simServer(world);
  const { client: off } = await simServer({ ...world, analystBudgetCompress: 0 });

  it('a failure on sim-small only, whose budget the skill exceeds: a compression, no rule; a failure on both: a rule', async () => {
    const reply = await analyst(client, SKILL, [...SMALL_ONLY, BOTH]);
    const edits = reply.patch.edits;
    expect(edits).toHaveLength(2);
    expect(edits[0]).toMatchObject({ op: 'replace', support_count: 2 });
    expect(edits[0]!.target).toBe(RULES.join('\n'));
    expect(edits[1]).toMatchObject({ op: 'append', content: rule('CertRevoked', 'auth') });
    expect(reply.patch.reasoning).toContain(
      '2 of them fail on one model only, whose attention budget the skill exceeds',
    );
    expect(reply.failure_summary[0]).toMatchObject({
      failure_type: 'skill_too_long',
      count: 2,
      description: '2 failure(s) on sim-small only, whose attention budget the skill exceeds (tasks: t1, t2)',
    });
  });

  it('analyst_budget_compress 0, or no labels: the reply it always gave (the skill covers t1 and t2: no rule for them)', async () => {
    const labelled = await analyst(off, SKILL, [...SMALL_ONLY, BOTH]);
    const bare = await analyst(
      client,
      SKILL,
      [...SMALL_ONLY, BOTH].map(({ model: _m, fails_on: _f, ...t }) => t),
    );
    expect(labelled.patch.edits).toEqual(bare.patch.edits);
    expect(bare.patch.edits).toEqual([
      { op: 'append', content: rule('CertRevoked', 'auth'), support_count: 1, source_type: 'failure' },
    ]);
  });

  it('a skill already compressed: no rule for the length failures, and nothing to propose for them', async () => {
    const compressed = applyEdits(SKILL, [
      { op: 'replace', target: RULES.join('\n'), content: compressionProposal(SKILL, 1)!.content },
    ]).skill;
    const big = `${compressed}\n${'Prose the small model has to read. '.repeat(80)}\n`;
    const reply = await analyst(client, big, SMALL_ONLY);
    expect(reply.patch.edits).toEqual([]);
  });
});
