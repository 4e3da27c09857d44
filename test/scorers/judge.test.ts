import { describe, expect, it, vi } from 'vitest';
import { readStageHeader, readTag } from '../../src/protocol/prompt.ts';
import { buildJudgeMessages, judgeSystemPrompt, llmJudge, type JudgeRequest } from '../../src/suite/scorers/index.ts';
import { ctx, task } from './helpers.ts';

describe('buildJudgeMessages', () => {
  const req: JudgeRequest = {
    rubric: 'Team and priority must match.',
    input: 'SSO down for everyone',
    expected: { team: 'auth', priority: 'p1' },
    output: '{"team":"auth","priority":"p2"}',
  };

  it('system = the judge prompt file; user = stage header + rubric/task/expected/output tags', () => {
    const [system, user] = buildJudgeMessages(req);
    expect(system).toEqual({ role: 'system', content: judgeSystemPrompt() });
    expect(system!.content).toMatch(/"reasoning".*"score".*"pass"/s);
    expect(user!.role).toBe('user');
    expect(user!.content.startsWith('# SkillOpt stage: judge\n')).toBe(true);
    expect(readStageHeader(user!.content)).toBe('judge');
    expect(readTag(user!.content, 'rubric')).toBe(req.rubric);
    expect(readTag(user!.content, 'task')).toBe(req.input);
    expect(readTag(user!.content, 'expected')).toBe('{"team":"auth","priority":"p1"}');
    expect(readTag(user!.content, 'output')).toBe(req.output);
  });

  it('passes string references through unchanged', () => {
    const user = buildJudgeMessages({ ...req, expected: 'disposed-object' })[1]!.content;
    expect(readTag(user, 'expected')).toBe('disposed-object');
  });
});

describe('llmJudge', () => {
  it('hands rubric, input, expected and output to ctx.judge and maps the verdict', async () => {
    const judge = vi.fn(async (_r: JudgeRequest) => ({
      reasoning: 'Names the right root cause.',
      score: 0.9,
      pass: true,
    }));
    const s = llmJudge({ rubric: 'Must name the root cause.' });
    const r = await s.score(ctx('disposed object', 'The object was disposed early.', judge));
    expect(r).toEqual({ hard: 1, soft: 0.9, feedback: 'Names the right root cause.' });
    expect(judge).toHaveBeenCalledWith({
      rubric: 'Must name the root cause.',
      input: 'What is it?',
      expected: 'disposed object',
      output: 'The object was disposed early.',
    });
  });

  it('hard needs both pass and score ≥ threshold', async () => {
    const s = llmJudge({ rubric: 'r', threshold: 0.8 });
    expect((await s.score(ctx('x', 'y', async () => ({ reasoning: 'ok', score: 0.7, pass: true })))).hard).toBe(0);
    expect((await s.score(ctx('x', 'y', async () => ({ reasoning: 'no', score: 0.95, pass: false })))).hard).toBe(0);
    expect((await s.score(ctx('x', 'y', async () => ({ reasoning: 'ok', score: 0.8, pass: true })))).hard).toBe(1);
  });

  it('falls back to a generated feedback, clamps the score, rejects NaN', async () => {
    const s = llmJudge({ rubric: 'r' });
    expect(await s.score(ctx('x', 'y', async () => ({ reasoning: '', score: 1.4, pass: true })))).toEqual({
      hard: 1,
      soft: 1,
      feedback: 'judge passed the answer with score 1',
    });
    await expect(
      s.score(ctx('x', 'y', async () => ({ reasoning: '', score: Number.NaN, pass: true }))),
    ).rejects.toThrow(/llm_judge/);
  });

  it('lets judge errors through unchanged (they are infrastructure errors)', async () => {
    const boom = new Error('ECONNREFUSED');
    await expect(llmJudge({ rubric: 'r' }).score(ctx('x', 'y', async () => Promise.reject(boom)))).rejects.toBe(boom);
  });

  it('rubric per task, expected override, option checks', async () => {
    const judge = vi.fn(async (_r: JudgeRequest) => ({ reasoning: 'fine', score: 1, pass: true }));
    const s = llmJudge({ rubric: (t) => `Grade ${t.id}`, expected: () => 'ref' });
    await s.score(ctx('x', 'y', judge));
    expect(judge.mock.calls[0]![0]).toMatchObject({ rubric: 'Grade t-1', expected: 'ref' });
    expect(() => llmJudge({ rubric: 'r', threshold: 2 })).toThrow(/threshold/);
    expect(() => llmJudge({ rubric: () => ' ' }).validate!(task('x'))).toThrow(/rubric/);
  });
});
