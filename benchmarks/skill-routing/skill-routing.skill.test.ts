/**
 * skill-routing: does the right skill load for a prompt?
 *
 * A trigger suite (defineTriggerSuite). Seven Agent Skills are listed to the target model by name and
 * description, as an agent lists them, with a `load_skill` tool; each of the 100 prompts of cases.json is a
 * test that passes when the model loads the skill the prompt is for (or none). Near-misses, prompts that
 * sound like a skill but need something else, have `kind: "near-miss"`. The summary gives precision, recall
 * and F1 per skill and the confusion table; `skillopt test --optimize` rewrites the description of the
 * `optimize` skill (dotnetdebug) and nothing else. See README.md.
 */
import { defineTriggerSuite } from 'skillopt';

const skill = (name: string) => `benchmarks/skill-routing/skills/${name}/SKILL.md`;

defineTriggerSuite({
  name: 'skill-routing',
  skills: [
    skill('dotnetdebug'),
    skill('ticket-triage'),
    skill('python-debugging'),
    skill('dotnet-build'),
    skill('incident-postmortem'),
    skill('customer-reply'),
    skill('sql-tuning'),
  ],
  cases: 'benchmarks/skill-routing/cases.json',
  optimize: 'dotnetdebug',
});
