/**
 * Trigger suites and the agent presentation (issue 14), below the CLI: precision, recall, F1 and the
 * confusion table from case records; the routing feedback the optimizer reads; the agent loop (load_skill
 * answered with the body, unknown names answered with the list); a case whose skill was not loaded fails and
 * says so; the description subject edits only the description and scores by trigger F1.
 */
import { describe, expect, it } from 'vitest';
import type { CaseRecord, ChatMessage, ToolCall, ToolSpec, TriggerOutcome } from '../../src/types.ts';
import {
  skillStats,
  triggerF1,
  triggerSummary,
  renderTriggerTable,
  skillLoadedCounts,
} from '../../src/suite/trigger-metrics.ts';
import { triggerFeedback } from '../../src/suite/trigger.ts';
import { agentKind, agentSkill, runAgent, LOAD_SKILL } from '../../src/suite/agent.ts';
import { descriptionSubject, SKILL_SUBJECT } from '../../src/optimizer/subject.ts';
import { suiteSummary } from '../../src/suite/summary.ts';
import { runSummary } from '../../src/suite/summary.ts';
import type { ProvidedSession } from '../../src/contract/session.ts';

const SKILLS = ['dotnetdebug', 'python-debugging', 'sql-tuning'];

function rec(
  id: string,
  expected: string | null,
  loaded: string | null,
  kind = expected ? 'positive' : 'near-miss',
  extra: Partial<CaseRecord> = {},
): CaseRecord {
  const pass = expected === loaded;
  return {
    suite: 'routing',
    id,
    split: 'val',
    task_type: kind,
    skill_hash: 'h',
    messages: [],
    output: loaded ?? 'none',
    expected,
    hard: pass ? 1 : 0,
    soft: pass ? 1 : 0,
    pass,
    feedback: '',
    usage: {
      calls: 1,
      attempts: 1,
      prompt_tokens: 10,
      completion_tokens: 1,
      cached_prompt_tokens: 0,
      reasoning_tokens: null,
      cost: null,
      call_ms: 0,
    },
    latency_ms: 1,
    cached: false,
    error_kind: null,
    error: null,
    simulated: true,
    trigger: { expected, loaded, kind, skills: SKILLS } satisfies TriggerOutcome,
    ...extra,
  };
}

const RECORDS = [
  rec('a', 'dotnetdebug', 'dotnetdebug'),
  rec('b', 'dotnetdebug', 'dotnetdebug'),
  rec('c', 'dotnetdebug', null),
  rec('d', 'dotnetdebug', 'python-debugging'),
  rec('e', null, 'dotnetdebug'),
  rec('f', 'python-debugging', 'python-debugging', 'near-miss'),
  rec('g', null, null),
  rec('h', 'dotnetdebug', null, 'positive', { error_kind: 'infra', error: 'down', pass: false }),
];

describe('trigger metrics', () => {
  it('precision, recall and F1 per skill; errored cases left out; null when there is nothing to measure', () => {
    const t = triggerSummary(RECORDS)!;
    expect(t.n).toBe(7);
    expect(t.per_skill.dotnetdebug).toEqual({
      precision: 0.666667,
      recall: 0.5,
      f1: 0.571429,
      tp: 2,
      fp: 1,
      fn: 2,
      expected: 4,
      loaded: 3,
    });
    expect(t.per_skill['python-debugging']).toMatchObject({ precision: 0.5, recall: 1, f1: 0.666667 });
    expect(t.per_skill['sql-tuning']).toEqual({
      precision: null,
      recall: null,
      f1: null,
      tp: 0,
      fp: 0,
      fn: 0,
      expected: 0,
      loaded: 0,
    });
    expect(skillStats([], 'x').f1).toBeNull();
    expect(triggerF1(RECORDS, 'dotnetdebug')).toBeCloseTo(4 / 7, 5);
    expect(triggerF1(RECORDS, 'sql-tuning')).toBe(0);
  });

  it('the confusion table (expected → loaded, with none), accuracy per kind, false triggers', () => {
    const t = triggerSummary(RECORDS)!;
    expect(t.labels).toEqual([...SKILLS, 'none']);
    expect(t.confusion.dotnetdebug).toEqual({ dotnetdebug: 2, 'python-debugging': 1, 'sql-tuning': 0, none: 1 });
    expect(t.confusion.none).toEqual({ dotnetdebug: 1, 'python-debugging': 0, 'sql-tuning': 0, none: 1 });
    expect(t.by_kind).toEqual({
      'near-miss': { n: 3, correct: 2, accuracy: 0.666667 },
      positive: { n: 4, correct: 2, accuracy: 0.5 },
    });
    expect(t.false_triggers).toBe(1);
    expect(t.accuracy).toBeCloseTo(4 / 7, 5);
    const table = renderTriggerTable(t).join('\n');
    expect(table).toMatch(/dotnetdebug\s+0\.667\s+0\.500\s+0\.571\s+4\s+3/);
    expect(table).toContain('confusion (rows: expected, columns: loaded)');
  });

  it('summary.json: trigger.per_skill and trigger.confusion, overall and per suite; absent for other suites', () => {
    const s = runSummary(RECORDS, { wallTimeS: 1 });
    expect(s.trigger?.per_skill.dotnetdebug?.f1).toBe(0.571429);
    expect(s.suites.routing?.trigger?.confusion).toEqual(s.trigger?.confusion);
    const plain = RECORDS.map(({ trigger: _t, ...r }) => r);
    expect(runSummary(plain, { wallTimeS: 1 }).trigger).toBeUndefined();
    expect(suiteSummary(plain)).not.toHaveProperty('trigger');
  });

  it('feedback says which mistake, for whom', () => {
    expect(triggerFeedback('dotnetdebug', 'dotnetdebug', 'positive')).toEqual({
      pass: true,
      feedback: "loaded 'dotnetdebug' as expected",
    });
    expect(triggerFeedback('dotnetdebug', null, 'positive').feedback).toBe(
      "missed trigger: should load 'dotnetdebug' but loaded no skill; the description of 'dotnetdebug' did not match this prompt",
    );
    expect(triggerFeedback(null, 'dotnetdebug', 'near-miss').feedback).toMatch(
      /^false trigger: should load no skill but loaded 'dotnetdebug' \(a near-miss/,
    );
    expect(triggerFeedback('sql-tuning', 'dotnetdebug', 'near-miss').feedback).toMatch(
      /^wrong skill: should load 'sql-tuning' but loaded 'dotnetdebug'/,
    );
  });
});

// ── the agent loop, against a scripted target ────────────────────────────────────────────────────────

const md = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}`;
const OWN = agentSkill(
  '/s/dotnetdebug/SKILL.md',
  md('dotnetdebug', 'Finds .NET bugs.', '- When the input mentions `Task.Result`, answer `deadlock`.\n'),
);
const PY = agentSkill(
  '/s/python-debugging/SKILL.md',
  md('python-debugging', 'Python tracebacks.', 'Read the traceback.\n'),
);

/** A target that answers each turn from a script: tool calls (by skill name) or a text. */
function scripted(turns: Array<string[] | string>) {
  const seen: Array<{ messages: ChatMessage[]; tools?: ToolSpec[] }> = [];
  let i = 0;
  return {
    seen,
    async callTarget(messages: ChatMessage[], _signal?: AbortSignal, _seed?: number, tools?: ToolSpec[]) {
      seen.push({ messages: [...messages], ...(tools ? { tools } : {}) });
      const turn = turns[i++] ?? 'done';
      const usage = {
        calls: 1,
        attempts: 1,
        prompt_tokens: 5,
        completion_tokens: 1,
        cached_prompt_tokens: 0,
        reasoning_tokens: null,
        cost: null,
        call_ms: 0,
      };
      if (typeof turn === 'string') return { text: turn, usage, simulated: true };
      const toolCalls: ToolCall[] = turn.map((name, k) => ({
        id: `c${i}-${k}`,
        name: LOAD_SKILL,
        arguments: JSON.stringify({ name }),
      }));
      return { text: '', usage, simulated: true, toolCalls };
    },
  };
}

describe('the agent loop', () => {
  const start: ChatMessage[] = [
    { role: 'system', content: 'listing' },
    { role: 'user', content: 'Task.Result hangs' },
  ];

  it('load_skill is answered with the body, then the model answers; usage adds up; loaded skills recorded once', async () => {
    const t = scripted([['dotnetdebug'], ['dotnetdebug', 'nope'], 'deadlock']);
    const r = await runAgent(t, start, [OWN, PY]);
    expect(r.text).toBe('deadlock');
    expect(r.loaded).toEqual(['dotnetdebug']);
    expect(r.usage).toMatchObject({ calls: 3, prompt_tokens: 15 });
    expect(t.seen[0]!.tools![0]).toMatchObject({
      name: 'load_skill',
      parameters: { properties: { name: { enum: ['dotnetdebug', 'python-debugging'] } } },
    });
    const tool = r.transcript.filter((m) => m.role === 'tool');
    expect(tool[0]).toEqual({
      role: 'tool',
      tool_call_id: 'c1-0',
      content: '- When the input mentions `Task.Result`, answer `deadlock`.\n',
    });
    expect(tool[2]!.content).toBe('error: no skill named "nope"; the skills are: dotnetdebug, python-debugging');
    expect(r.transcript[2]).toMatchObject({ role: 'assistant', tool_calls: [{ name: 'load_skill' }] });
  });

  it('routing only (trigger suites): the first loaded skill is the answer, or none; one call', async () => {
    expect(await runAgent(scripted([['python-debugging']]), start, [OWN, PY], { routeOnly: true })).toMatchObject({
      text: 'python-debugging',
      loaded: ['python-debugging'],
    });
    const none = await runAgent(scripted(['I can answer directly']), start, [OWN, PY], { routeOnly: true });
    expect(none).toMatchObject({ text: 'none', loaded: [], usage: { calls: 1 } });
  });

  it('a case whose skill was not loaded fails, and its feedback says so', async () => {
    const runner = agentKind('dotnetdebug', []).runner({} as ProvidedSession, {
      text: md('dotnetdebug', 'Finds .NET bugs.', 'body\n'),
      path: '/x/best_skill.md',
    });
    expect(
      runner.messages(
        [
          { role: 'system', content: 'skill' },
          { role: 'user', content: 'q' },
        ],
        { id: 't', input: 'q', expected: 'x' },
      )[0]!.content,
    ).toContain('<name>dotnetdebug</name>');
    const run = {
      text: 'unknown',
      usage: {
        calls: 1,
        attempts: 1,
        prompt_tokens: 1,
        completion_tokens: 1,
        cached_prompt_tokens: 0,
        reasoning_tokens: null,
        cost: null,
        call_ms: 0,
      },
      simulated: true,
      transcript: [],
      loaded: [] as string[],
    };
    const missed = runner.finish({ hard: 1, soft: 1, feedback: 'right label' }, run, {
      id: 't',
      input: 'q',
      expected: 'x',
    });
    expect(missed.score.hard).toBe(0);
    expect(missed.score.feedback).toBe(
      "skill not loaded: 'dotnetdebug' was listed but the model loaded no skill, so its instructions were never read (its description did not match this request); the answer: right label",
    );
    expect(missed.extra).toEqual({ skill_loaded: false, loaded_skills: [] });
    const ok = runner.finish(
      { hard: 1, soft: 1, feedback: 'fine' },
      { ...run, loaded: ['dotnetdebug'] },
      { id: 't', input: 'q', expected: 'x' },
    );
    expect(ok).toEqual({
      score: { hard: 1, soft: 1, feedback: 'fine' },
      extra: { skill_loaded: true, loaded_skills: ['dotnetdebug'] },
    });
    expect(
      skillLoadedCounts([
        rec('a', null, null, 'x', { trigger: undefined, skill_loaded: true }),
        rec('b', null, null, 'x', { trigger: undefined, skill_loaded: false }),
      ]),
    ).toEqual({ loaded: 1, not_loaded: 1 });
  });

  it('a skill without frontmatter cannot be presented as an agent skill: one line naming the file', () => {
    const runner = () =>
      agentKind('dotnetdebug', []).runner({} as ProvidedSession, {
        text: '# plain\n',
        path: '/skills/dotnetdebug/initial.md',
      });
    expect(runner).toThrow(
      "/skills/dotnetdebug/initial.md: presentation 'agent' lists skills by their frontmatter name and description, and this skill has no frontmatter (a '---' block with name and description first)",
    );
  });
});

describe('the description subject', () => {
  const seed = md('dotnetdebug', 'Helps with C# code.', '# Body\n');
  const subject = descriptionSubject(
    { optimize: 'dotnetdebug', skills: [{ name: 'dotnetdebug', description: 'Helps with C# code.', path: 'p' }] },
    '/s/dotnetdebug/SKILL.md',
  );

  it('the stages see the description; a candidate changes the description and nothing else', () => {
    expect(subject.view(seed)).toBe('Helps with C# code.');
    const next = subject.compose(seed, 'Helps with C# code.\n\nAlso use it for deadlock or hangs.\n');
    expect(next).toEqual({
      doc: seed.replace(
        'description: Helps with C# code.',
        'description: Helps with C# code. Also use it for deadlock or hangs.',
      ),
    });
    expect(subject.compose(seed, 'x'.repeat(1100))).toEqual({
      error:
        "the candidate description breaks the format: frontmatter 'description' is 1100 characters; the limit is 1024",
    });
    expect(subject.stages!('analyst_error', 'patch')).toBe('description_analyst_error');
    expect(subject.epochStages).toBe(false);
    expect(subject.context().join('\n')).toContain('<skill_name>\ndotnetdebug\n</skill_name>');
  });

  it('scored by trigger F1; the analysts see the cases that concern the skill', () => {
    const v = subject.score(suiteSummary(RECORDS), RECORDS);
    expect(v).toEqual({ hard: 0.571429, soft: 0.571429, pass_rate: 0.571429, n: 8, errored: 1 });
    expect(subject.reflectable(RECORDS).map((r) => r.id)).toEqual(['a', 'b', 'c', 'd', 'e', 'h']);
    expect(SKILL_SUBJECT.view(seed)).toBe(seed);
    expect(SKILL_SUBJECT.compose(seed, 'x')).toEqual({ doc: 'x' });
  });
});
