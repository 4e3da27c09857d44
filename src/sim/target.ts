/**
 * The simulated target role: it obeys the rules of the skill in its system prompt and nothing else.
 * The reply is the answer of the rule that fires on the last user message (longest trigger wins), or
 * `unknown`. `maxRules` hides rules past the N-th (so bloat hurts); `noise` replaces the answer with a
 * wrong one with a seeded probability decided by hashing (seed, model, the full messages), never by call
 * order, so concurrent requests stay deterministic.
 */
import { indexHash, unitHash } from './hash.ts';
import { matchRule, parseRules, type Rule, type RuleMatch } from './rules.ts';
import { lastUserMessage } from '../util/messages.ts';

export const UNKNOWN_ANSWER = 'unknown';

export interface SimMessage {
  role: string;
  content: string;
}

export interface TargetOptions {
  seed: number;
  /**
   * The request's own seed when it samples (no temperature, or one above 0): another sample re-draws the
   * noise, like a real model's. Undefined for a request at temperature 0 or without a seed: stable.
   */
  sample?: number;
  /** Probability (0..1) of a wrong answer. */
  noise: number;
  /** Rules after the N-th are not seen; 0 = unlimited. */
  maxRules: number;
}

export interface TargetReply {
  content: string;
  /** The rule that fired (after `maxRules`), or null. */
  match: RuleMatch | null;
  /** Whether noise replaced the answer. */
  noisy: boolean;
}

/** Rules of the last few system prompts: a run sends the same skill with every case. */
const ruleCache = new Map<string, readonly Rule[]>();
const RULE_CACHE_SIZE = 16;

function rulesOf(system: string): readonly Rule[] {
  let rules = ruleCache.get(system);
  if (!rules) {
    rules = parseRules(system);
    if (ruleCache.size >= RULE_CACHE_SIZE) ruleCache.delete(ruleCache.keys().next().value!);
    ruleCache.set(system, rules);
  }
  return rules;
}

export function simulateTarget(messages: readonly SimMessage[], model: string, opts: TargetOptions): TargetReply {
  // a skill body a `load_skill` call returned (agent presentation) is read like the system prompt
  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer' || m.role === 'tool')
    .map((m) => m.content)
    .join('\n');
  const lastUser = lastUserMessage(messages);
  let rules = rulesOf(system);
  if (opts.maxRules > 0) rules = rules.slice(0, opts.maxRules);
  const match = matchRule(rules, lastUser);
  const answer = match ? match.rule.answer : UNKNOWN_ANSWER;
  const draw = opts.sample === undefined ? [opts.seed, model, messages] : [opts.seed, model, messages, opts.sample];
  if (opts.noise > 0 && unitHash([...draw, 'target-noise']) < opts.noise) {
    const wrong = [...new Set([UNKNOWN_ANSWER, ...rules.map((r) => r.answer)])].filter((a) => a !== answer);
    if (wrong.length > 0) {
      const pick = wrong[indexHash([...draw, 'target-noise-pick'], wrong.length)]!;
      return { content: pick, match, noisy: true };
    }
  }
  return { content: answer, match, noisy: false };
}
