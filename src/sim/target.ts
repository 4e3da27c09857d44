/**
 * The simulated target role: it obeys the rules of the skill in its system prompt and nothing else, as
 * imperfectly as a real model does.
 *
 * For the last user message (the case's input):
 * 1. every rule with a trigger in the input is a candidate (`maxRules` hides rules past the N-th);
 * 2. dilution (attention.ts): past the attention budget each candidate is missed with a probability that
 *    grows with the overload;
 * 3. interference: the most specific candidate (longest trigger) wins, except that when r candidates with
 *    other answers compete, the target follows one of those instead with probability
 *    1 − (1 − `interference`)^r (each conflicting rule is one more chance to be confused);
 * 4. noise: with probability `noise` the answer is replaced by a wrong one (`unknown` or another rule's).
 * `unknown` when no candidate is left.
 *
 * Every draw is a hash of (seed, model, the input, what the decision is about, the sample), never of
 * the whole skill: a skill edit that changes neither the rules an input meets nor the answer it gets
 * leaves that case's outcome alone (except dilution's threshold, which moves with the skill's size), so
 * two skills compared on the same cases differ only where they really differ. A request at temperature 0
 * (or without a seed) is one fixed draw; a sampled request (its seed) re-draws, like a real sample.
 */
import { missProbability } from './attention.ts';
import { rendezvous, unitHash } from './hash.ts';
import { matchingRules, mostSpecific, parseRules, type Rule, type RuleMatch } from './rules.ts';
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
  /** Probability (0..1) of following a competing rule with another answer instead of the most specific one; default 0. */
  interference?: number;
  /** Miss probability per unit of overload (see attention.ts); default 0 = off. */
  dilution?: number;
  /** Attention budget in rules; 0 (default) = none. */
  dilutionRules?: number;
  /** Attention budget in characters of system prompt; 0 (default) = none. */
  dilutionChars?: number;
}

export interface TargetReply {
  content: string;
  /** The rule the target followed (after `maxRules`, dilution and interference), or null. */
  match: RuleMatch | null;
  /** Whether noise replaced the answer. */
  noisy: boolean;
  /** Rules that would have fired but were missed (dilution). */
  missed: number;
  /** Whether interference made the target follow a less specific rule with another answer. */
  confused: boolean;
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

const matchKey = (m: RuleMatch) => [m.trigger.toLowerCase(), m.rule.answer];

export function simulateTarget(messages: readonly SimMessage[], model: string, opts: TargetOptions): TargetReply {
  // a skill body a `load_skill` call returned (agent presentation) is read like the system prompt
  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer' || m.role === 'tool')
    .map((m) => m.content)
    .join('\n');
  const input = lastUserMessage(messages);
  const allRules = rulesOf(system);
  const rules = opts.maxRules > 0 ? allRules.slice(0, opts.maxRules) : allRules;
  const sampled = opts.sample === undefined ? [] : [opts.sample];
  const key = (purpose: string, ...parts: unknown[]) => [opts.seed, model, purpose, input, ...parts, ...sampled];

  const candidates = matchingRules(rules, input);
  const pMiss = missProbability(allRules.length, system.length, {
    dilution: opts.dilution ?? 0,
    dilutionRules: opts.dilutionRules ?? 0,
    dilutionChars: opts.dilutionChars ?? 0,
  });
  const seen = pMiss > 0 ? candidates.filter((m) => unitHash(key('target-dilution', ...matchKey(m))) >= pMiss) : candidates;

  let match = mostSpecific(seen);
  let confused = false;
  const interference = opts.interference ?? 0;
  if (match && interference > 0) {
    const winner = match;
    const rivals = seen.filter((m) => m.rule.answer !== winner.rule.answer);
    // each rival rule is one more chance to be confused: 1 − (1 − interference)^rivals, one draw per input
    if (rivals.length > 0 && unitHash(key('target-interference')) < 1 - (1 - interference) ** rivals.length) {
      match = rendezvous(rivals, matchKey, key('target-interference-pick'));
      confused = true;
    }
  }
  const answer = match ? match.rule.answer : UNKNOWN_ANSWER;
  const reply = { match, missed: candidates.length - seen.length, confused };
  if (opts.noise > 0 && unitHash(key('target-noise', answer)) < opts.noise) {
    const wrong = [...new Set([UNKNOWN_ANSWER, ...rules.map((r) => r.answer)])].filter((a) => a !== answer);
    const pick = rendezvous(wrong, (a) => a, key('target-noise-pick', answer));
    if (pick !== null) return { ...reply, content: pick, noisy: true };
  }
  return { ...reply, content: answer, noisy: false };
}
