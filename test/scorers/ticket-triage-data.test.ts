/** The ticket-triage benchmark data is scored by `jsonSchema`: every task must validate and a perfect answer must score 1. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jsonSchema } from '../../src/suite/scorers/index.ts';
import type { SkillTask } from '../../src/types.ts';
import { packageRoot } from '../../src/util/paths.ts';

const TEAMS = ['billing', 'auth', 'payments', 'infra', 'mobile', 'data'] as const;
const Triage = z.object({ team: z.enum(TEAMS), priority: z.enum(['p1', 'p2', 'p3']) });
type Triage = z.infer<typeof Triage>;

const root = packageRoot();
const tasks = JSON.parse(readFileSync(`${root}/benchmarks/ticket-triage/tasks.json`, 'utf8')) as SkillTask<Triage>[];
const seed = readFileSync(`${root}/skills/ticket-triage/initial.md`, 'utf8');

describe('ticket-triage data', () => {
  const scorer = jsonSchema<Triage>(Triage);

  it('has 60–90 tasks with sequential ids, a channel and keys in the order team, priority', () => {
    expect(tasks.length).toBeGreaterThanOrEqual(60);
    expect(tasks.length).toBeLessThanOrEqual(90);
    tasks.forEach((t, i) => {
      expect(t.id).toBe(`tt-${String(i + 1).padStart(3, '0')}`);
      expect(['email', 'chat', 'api-alert']).toContain(t.task_type);
      expect(Object.keys(t.expected)).toEqual(['team', 'priority']);
      expect(t.input.startsWith('Subject: ')).toBe(true);
    });
  });

  it('every task validates and a perfect answer scores 1', async () => {
    for (const task of tasks) {
      scorer.validate!(task);
      const r = await scorer.score({
        task,
        output: JSON.stringify(task.expected),
        messages: [],
        judge: async () => ({ reasoning: '', score: 0, pass: false }),
      });
      expect(r.hard, task.id).toBe(1);
    }
  });

  it('keeps the number of (team, priority) answers moderate', () => {
    const combos = new Set(tasks.map((t) => JSON.stringify(t.expected)));
    expect(combos.size).toBeGreaterThanOrEqual(10);
    expect(combos.size).toBeLessThanOrEqual(14);
  });

  it('seed skill: a backticked line is either a rule or free of joiner words', () => {
    const joiner = /\b(answer|respond|reply|output)\b|→|->|=>/i;
    const rules = seed.split('\n').filter((l) => l.includes('`') && joiner.test(l));
    expect(rules.length).toBeLessThanOrEqual(2);
    for (const r of rules)
      expect(r).toMatch(/^- When the input mentions `[^`]+`, answer `\{"team":"[a-z]+","priority":"p[123]"\}`\.$/);
  });
});
