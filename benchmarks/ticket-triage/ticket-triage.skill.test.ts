/**
 * ticket-triage: route a support ticket to a team and a priority, answered as JSON.
 *
 * This suite shows the structured-output scorer family: the answer is parsed as JSON, checked with a
 * zod schema, and compared field by field with the expected object (hard = every field right,
 * soft = the share of fields right, so the right team with the wrong priority earns 0.5).
 */
import { z } from 'zod';
import { defineSkillSuite, jsonSchema } from 'skillopt';

const Triage = z.object({
  team: z.enum(['auth', 'payments', 'billing', 'infra', 'mobile', 'data']),
  priority: z.enum(['p1', 'p2', 'p3']),
});

defineSkillSuite<z.infer<typeof Triage>>({
  name: 'ticket-triage',
  tasks: 'benchmarks/ticket-triage/tasks.json',
  skill: 'skills/ticket-triage/initial.md',
  scorer: jsonSchema(Triage),
  messages: (skill, task) => [
    { role: 'system', content: skill },
    { role: 'user', content: `Channel: ${task.task_type}\n\n${task.input}` },
  ],
});
