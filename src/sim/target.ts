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
 *
 * Call rules (call-rules.ts): when the request offers tools, the call rules that fire this turn (on the
 * input, or on the last tool result) make their calls first, one turn at a time, each rule once per case;
 * the answer rules answer once no call rule fires (docs/simulated-model.md, "Call rules"). A skill without
 * call rules, or a request without tools, is answered exactly as before.
 */
import { missProbability } from './attention.ts';
import {
  canonicalJson,
  fillText,
  firingCallRules,
  parseCallRules,
  type CallArgs,
  type CallRule,
} from './call-rules.ts';
import { rendezvous, unitHash } from './hash.ts';
import { LOAD_SKILL_TOOL_NAME } from './routing.ts';
import { matchingRules, mostSpecific, parseRules, type Rule, type RuleMatch } from './rules.ts';
import { lastUserMessage } from '../util/messages.ts';

export const UNKNOWN_ANSWER = 'unknown';

export interface SimMessage {
  role: string;
  content: string;
}

/** A call an assistant message of the conversation made: its arguments parsed (the raw text when not JSON). */
export interface SimPastCall {
  name: string;
  args: unknown;
}

/**
 * What the request says about tools, beside the messages' text (dispatch.ts reads it from the request):
 * absent for a request without tools (then no call rule fires and the reply is the answer rules' one).
 */
export interface SimToolContext {
  /** The function names the request offers (`tools`; none when `tool_choice` is `none`). */
  offered: readonly string[];
  /** Every call the conversation's assistant messages made, in order. */
  calls: readonly SimPastCall[];
  /**
   * Per message (same index as the messages): for a `tool` message, the name of the call it answers
   * (by `tool_call_id`), or undefined when no call in the conversation has its id.
   */
  answers: readonly (string | undefined)[];
}

/** A call the target makes this turn: the arguments as the JSON string of the wire format. */
export interface SimToolCall {
  name: string;
  arguments: string;
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
  /** Whether call rules triggered by a tool result are followed (default true); they still count as rules. */
  resultCallRules?: boolean;
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
  /** The calls of this turn (call rules that fired), in document order; empty when it answers. */
  calls: SimToolCall[];
}

interface SkillRules {
  /** Every answer rule as parseRules reads it: what a request without tools follows, as it always did. */
  plain: readonly Rule[];
  /** With tools offered: the answer rules (lines that are call rules excluded)… */
  answers: readonly Rule[];
  /** …the call rules… */
  calls: readonly CallRule[];
  /** …and the line indexes of every rule (answer and call), in document order: `maxRules` counts these. */
  lines: readonly number[];
}

/** Rules of the last few system prompts: a run sends the same skill with every case. */
const ruleCache = new Map<string, SkillRules>();
const RULE_CACHE_SIZE = 16;

function rulesOf(system: string): SkillRules {
  let rules = ruleCache.get(system);
  if (!rules) {
    const plain = parseRules(system);
    const calls = parseCallRules(system);
    const callLines = new Set(calls.map((c) => c.lineIndex));
    const answers = calls.length === 0 ? plain : plain.filter((r) => !callLines.has(r.lineIndex));
    const lines = [...answers.map((r) => r.lineIndex), ...callLines].sort((a, b) => a - b);
    rules = { plain, answers, calls, lines };
    if (ruleCache.size >= RULE_CACHE_SIZE) ruleCache.delete(ruleCache.keys().next().value!);
    ruleCache.set(system, rules);
  }
  return rules;
}

/**
 * The rules a skill counts against an attention budget and `maxRules`: its answer rules, and with tools
 * offered (`procedure`) its call rules too, as the target reads them.
 */
export function attentionRuleCount(system: string, procedure: boolean): number {
  const skill = rulesOf(system);
  return procedure && skill.calls.length > 0 ? skill.lines.length : skill.plain.length;
}

const matchKey = (m: RuleMatch) => [m.trigger.toLowerCase(), m.rule.answer];

/** Whether a `tool` message carries a skill body (a `load_skill` result, or a result no call of the conversation asked for). */
const isSkillResult = (answers: string | undefined) => answers === undefined || answers === LOAD_SKILL_TOOL_NAME;

/**
 * The text of the last tool result: the results of the last turn that called a tool other than `load_skill`,
 * joined in call order (one call per turn: that call's result); null when no such result is in the conversation.
 */
export function lastToolResult(messages: readonly SimMessage[], tools: SimToolContext | undefined): string | null {
  if (!tools) return null;
  let end = messages.length - 1;
  while (end >= 0 && !(messages[end]!.role === 'tool' && !isSkillResult(tools.answers[end]))) end--;
  if (end < 0) return null;
  let start = end;
  while (start > 0 && messages[start - 1]!.role === 'tool') start--;
  const parts: string[] = [];
  for (let i = start; i <= end; i++) if (!isSkillResult(tools.answers[i])) parts.push(messages[i]!.content);
  return parts.join('\n');
}

export function simulateTarget(
  messages: readonly SimMessage[],
  model: string,
  opts: TargetOptions,
  tools?: SimToolContext,
): TargetReply {
  // a skill body a `load_skill` call returned (agent presentation) is read like the system prompt; the
  // results of the suite's own tools are not
  const system = messages
    .filter(
      (m, i) =>
        m.role === 'system' || m.role === 'developer' || (m.role === 'tool' && isSkillResult(tools?.answers[i])),
    )
    .map((m) => m.content)
    .join('\n');
  const input = lastUserMessage(messages);
  const skill = rulesOf(system);
  // with tools offered the call rules are rules too (maxRules and dilution count them); without, the skill
  // reads as it always did
  const procedure = tools !== undefined && tools.offered.length > 0 && skill.calls.length > 0;
  const answerRules = procedure ? skill.answers : skill.plain;
  const ruleLines = procedure ? skill.lines : skill.plain.map((r) => r.lineIndex);
  const visible = opts.maxRules > 0 ? new Set(ruleLines.slice(0, opts.maxRules)) : null;
  const rules = visible ? answerRules.filter((r) => visible.has(r.lineIndex)) : answerRules;
  const sampled = opts.sample === undefined ? [] : [opts.sample];
  const key = (purpose: string, ...parts: unknown[]) => [opts.seed, model, purpose, input, ...parts, ...sampled];
  const pMiss = missProbability(ruleLines.length, system.length, {
    dilution: opts.dilution ?? 0,
    dilutionRules: opts.dilutionRules ?? 0,
    dilutionChars: opts.dilutionChars ?? 0,
  });
  const result = lastToolResult(messages, tools);

  if (procedure) {
    const seen = visible ? skill.calls.filter((r) => visible.has(r.lineIndex)) : skill.calls;
    const callRules = opts.resultCallRules === false ? seen.filter((r) => r.source !== 'result') : seen;
    const turn = decideCalls(callRules, tools, input, result, key, pMiss, opts);
    if (turn.calls.length > 0)
      return {
        content: '',
        match: null,
        noisy: turn.noisy,
        missed: turn.missed,
        confused: turn.confused,
        calls: turn.calls,
      };
  }

  // answer placeholders are filled from the input, then the last tool result; one with no match: the rule does not fire
  const sources = [input, result];
  const answerOf = (r: Rule) => fillText(r.answer, sources);
  const candidates = matchingRules(rules, input).filter((m) => answerOf(m.rule) !== null);
  const seen =
    pMiss > 0 ? candidates.filter((m) => unitHash(key('target-dilution', ...matchKey(m))) >= pMiss) : candidates;

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
  const answer = match ? answerOf(match.rule)! : UNKNOWN_ANSWER;
  const reply = { match, missed: candidates.length - seen.length, confused, calls: [] };
  if (opts.noise > 0 && unitHash(key('target-noise', answer)) < opts.noise) {
    const wrong = [...new Set([UNKNOWN_ANSWER, ...rules.map((r) => answerOf(r) ?? r.answer)])].filter(
      (a) => a !== answer,
    );
    const pick = rendezvous(wrong, (a) => a, key('target-noise-pick', answer));
    if (pick !== null) return { ...reply, content: pick, noisy: true };
  }
  return { ...reply, content: answer, noisy: false };
}

interface FiringCall {
  rule: CallRule;
  args: CallArgs;
  /** What the draws about this rule are keyed on: its trigger, tool and argument template (and the result it read). */
  ruleKey: unknown[];
}

/**
 * The calls of one turn: every visible call rule for an offered tool whose trigger is in its text (the input,
 * or the last tool result), whose placeholders fill, and which has not fired yet (no call of its tool with
 * arguments of its shape, or with the very arguments it would send, in the conversation); then the world:
 * dilution misses a rule (one draw per input and rule), interference among rules calling one tool with
 * different arguments makes only one of them this turn (the others come on the next), noise drops or
 * garbles one argument of a call (a call without arguments is dropped).
 */
function decideCalls(
  callRules: readonly CallRule[],
  tools: SimToolContext,
  input: string,
  result: string | null,
  key: (purpose: string, ...parts: unknown[]) => unknown[],
  pMiss: number,
  opts: TargetOptions,
): { calls: SimToolCall[]; missed: number; confused: boolean; noisy: boolean } {
  const madeBefore = new Set(tools.calls.map((c) => `${c.name}\u0000${canonicalJson(c.args)}`));
  let missed = 0;
  let firing: FiringCall[] = [];
  for (const { rule, trigger, args } of firingCallRules(callRules, {
    input,
    result,
    offered: tools.offered,
    history: tools.calls,
  })) {
    const ruleKey = [
      trigger.toLowerCase(),
      rule.tool,
      canonicalJson(rule.args),
      ...(rule.source === 'result' ? [result] : []),
    ];
    if (pMiss > 0 && unitHash(key('target-call-dilution', ...ruleKey)) < pMiss) {
      missed++;
      continue;
    }
    firing.push({ rule, args, ruleKey });
  }

  let confused = false;
  const interference = opts.interference ?? 0;
  if (interference > 0) {
    for (const tool of new Set(firing.map((f) => f.rule.tool))) {
      const group = firing.filter((f) => f.rule.tool === tool);
      const distinct = new Set(group.map((f) => canonicalJson(f.args))).size;
      if (distinct < 2) continue;
      const keys = group.map((f) => f.ruleKey);
      if (unitHash(key('target-call-interference', tool, ...keys)) < 1 - (1 - interference) ** (distinct - 1)) {
        const pick = rendezvous(group, (f) => f.ruleKey, key('target-call-interference-pick', tool, ...keys))!;
        firing = firing.filter((f) => f.rule.tool !== tool || f === pick);
        confused = true;
      }
    }
  }

  let noisy = false;
  const calls: SimToolCall[] = [];
  const thisTurn = new Set<string>();
  for (const f of firing) {
    let args: CallArgs | null = f.args;
    if (opts.noise > 0 && unitHash(key('target-call-noise', ...f.ruleKey, canonicalJson(f.args))) < opts.noise) {
      args = corrupt(f.args, (purpose) => key(purpose, ...f.ruleKey, canonicalJson(f.args)));
      noisy = true;
    }
    if (args === null) continue;
    const id = `${f.rule.tool}\u0000${canonicalJson(args)}`;
    if (madeBefore.has(id) || thisTurn.has(id)) continue;
    thisTurn.add(id);
    calls.push({ name: f.rule.tool, arguments: JSON.stringify(args) });
  }
  return { calls, missed, confused, noisy };
}

/**
 * Noise on a call: one argument (a seeded pick) is dropped or garbled (a seeded coin); null for a call
 * without arguments (it is not made). Garbled: a text of several words loses its last word, a path its last
 * segment, any other text its last character; a number is off by one; a boolean flips; any other value is dropped.
 */
function corrupt(args: CallArgs, key: (purpose: string) => unknown[]): CallArgs | null {
  const names = Object.keys(args);
  if (names.length === 0) return null;
  const name = rendezvous(names, (n) => n, key('target-call-noise-pick'))!;
  const out: CallArgs = { ...args };
  const value = args[name];
  if (unitHash(key('target-call-noise-mode')) < 0.5) {
    delete out[name];
    return out;
  }
  if (typeof value === 'string') {
    const words = value.trim().split(/\s+/);
    if (words.length > 1) out[name] = words.slice(0, -1).join(' ');
    else if (/\/./.test(value)) out[name] = value.replace(/\/+$/, '').replace(/\/[^/]*$/, '/');
    else out[name] = value.slice(0, -1);
  } else if (typeof value === 'number') out[name] = value + 1;
  else if (typeof value === 'boolean') out[name] = !value;
  else delete out[name];
  return out;
}
