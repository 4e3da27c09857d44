/**
 * The simulated optimizer's description stages (issue 14): from trigger failures it proposes description
 * edits — trigger terms for missed prompts, a removed over-broad claim or an exclusion for false triggers —
 * within the edit budget and the format's length limit; merges drop sentences that add nothing new.
 */
import { describe, expect, it } from 'vitest';
import { OptimizerLLM } from '../../src/optimizer/llm.ts';
import {
  budgetSection,
  jsonSection,
  jsonBlock,
  skillSection,
  tag,
  trajectoriesSection,
  type Trajectory,
} from '../../src/protocol/prompt.ts';
import { STAGE_SCHEMAS } from '../../src/protocol/schemas.ts';
import { removablePhrase, simulateDescriptionStage } from '../../src/sim/describe.ts';
import { routeSkill } from '../../src/sim/routing.ts';

const SEED =
  'Helps with C# and .NET code, including compiler errors, exceptions, builds, NuGet packages and general programming questions.';
const OTHERS = [{ name: 'dotnet-build', description: 'Fixes MSBuild and compiler errors and NuGet restore failures.' }];

const traj = (id: string, input: string, expected: string | null, output: string): Trajectory => ({
  id,
  input,
  output,
  expected,
  score: { hard: 0, soft: 0 },
  feedback: '',
});

function analyst(description: string, trajectories: Trajectory[], budget = 4, limit = 1024) {
  const text = OptimizerLLM.user('description_analyst_error', [
    skillSection(description),
    budgetSection(budget),
    tag('skill_name', 'dotnetdebug'),
    tag('length_limit', String(limit)),
    jsonSection('other_skills', OTHERS),
    trajectoriesSection(trajectories),
  ]);
  const reply = simulateDescriptionStage('description_analyst_error', text);
  expect(STAGE_SCHEMAS.description_analyst_error.safeParse(reply).success).toBe(true);
  return (
    reply as { patch: { edits: Array<{ op: string; content?: string; target?: string; support_count: number }> } }
  ).patch.edits;
}

const MISSED = [
  traj('m1', 'The worker hangs on startup and every thread blocks: a deadlock?', 'dotnetdebug', 'none'),
  traj('m2', 'WPF window hangs after Save; the UI thread is blocked. Deadlock?', 'dotnetdebug', 'none'),
  traj('m3', 'Memory keeps growing in the service: a memory leak in the heap?', 'dotnetdebug', 'none'),
];

describe('description_analyst_error', () => {
  it('missed triggers: the fewest shared terms that load the skill, plus shared ones to spare, in one sentence each', () => {
    const edits = analyst(SEED, MISSED);
    // two terms load it (deadlock, thread); hangs, shared by both hang prompts too, is the spare; the memory
    // prompt's terms are its own (no spare: a word of one prompt would not generalise)
    expect(edits.map((e) => e.content)).toEqual([
      'Also use it for deadlock, thread or hangs.',
      'Also use it for Memory or growing.',
    ]);
    expect(edits.map((e) => e.op)).toEqual(['append', 'append']);
    // with the edits appended, the routing loads the skill on the three prompts
    const next = `${SEED} ${edits.map((e) => e.content).join(' ')}`;
    for (const m of MISSED)
      expect(routeSkill(m.input, [{ name: 'dotnetdebug', description: next }, ...OTHERS])).toBe('dotnetdebug');
  });

  it('false triggers: delete the opening sentence’s over-broad item when no missed prompt needs it, else exclude a term', () => {
    const nuget = traj('f1', 'NuGet restore fails: package Contoso not found', 'dotnet-build', 'dotnetdebug');
    const java = traj('f2', 'Java service hangs, thread dump shows a deadlock', null, 'dotnetdebug');
    const desc = `${SEED} Also use it for deadlock or hangs.`;
    const edits = analyst(desc, [nuget, java]);
    expect(edits).toEqual([
      { op: 'delete', target: ', NuGet packages', support_count: 1, source_type: 'failure' },
      { op: 'append', content: 'Do not use it for requests about Java.', support_count: 1, source_type: 'failure' },
    ]);
  });

  it('stays within the edit budget and the length limit', () => {
    expect(analyst(SEED, MISSED, 1)).toHaveLength(1);
    expect(analyst(SEED, MISSED, 4, SEED.length + 30)).toEqual([]); // no sentence fits in 30 more characters
  });

  it('a success minibatch proposes nothing; merges drop sentences whose terms are already added', () => {
    const ok = simulateDescriptionStage(
      'description_analyst_success',
      OptimizerLLM.user('description_analyst_success', [trajectoriesSection(MISSED)]),
    );
    expect(ok).toMatchObject({ batch_size: 3, patch: { edits: [] } });
    const patches = [
      { edits: [{ op: 'append', content: 'Also use it for deadlock or hangs.', support_count: 2 }] },
      {
        edits: [
          { op: 'append', content: 'Also use it for hangs.', support_count: 1 },
          { op: 'append', content: 'Also use it for heap.', support_count: 1 },
        ],
      },
    ];
    const merged = simulateDescriptionStage(
      'description_merge_failure',
      OptimizerLLM.user('description_merge_failure', [tag('patches', jsonBlock(patches))]),
    ) as {
      edits: Array<{ content: string; support_count: number }>;
    };
    expect(merged.edits.map((e) => [e.content, e.support_count])).toEqual([
      ['Also use it for deadlock or hangs.', 3],
      ['Also use it for heap.', 1],
    ]);
  });
});

describe('removablePhrase', () => {
  it('a list item of the opening sentence with one separator; never the head of a sentence or a later sentence', () => {
    expect(removablePhrase(SEED, 'nuget')).toBe(', NuGet packages');
    expect(removablePhrase(SEED, 'compiler')).toBe('compiler errors, ');
    expect(removablePhrase(SEED, 'general')).toBe(' and general programming questions');
    expect(removablePhrase(SEED, 'c#')).toBeNull();
    expect(removablePhrase(`${SEED} Also use it for deadlock, hangs or heap.`, 'hang')).toBeNull();
  });
});
