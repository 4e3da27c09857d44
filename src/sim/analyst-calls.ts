/**
 * The simulated analyst's procedure learning (docs/simulated-model.md, "The simulated analyst"): call
 * rules (call-rules.ts) proposed from the tool-call findings of failed trajectories
 * (src/protocol/tool-feedback.ts), as a real analyst turns "read_file was never called" into a procedure
 * step.
 *
 * - A `missing call` becomes a call rule making that call when a predictive token of the input is present:
 *   the token chosen like an answer rule's (analyst.ts `compareCandidates`: most failures of the minibatch
 *   that miss the same call net of the failures naming it that do not), the arguments generalized
 *   (`generalizeArgs`: a value that is the input's first path, quoted string, number or id becomes that
 *   placeholder), so the rule makes the call for every input of the kind.
 * - A `wrong arguments` finding becomes a `replace` of the call rule that made the wrong call (its tool,
 *   its trigger in the input, its arguments filled from the input equal to the wrong ones), keeping that
 *   rule's triggers, with the expected arguments generalized; with no such rule, it is learned like a
 *   missing call.
 * - A missing call a rule in the skill already makes for this input (its trigger is in the input, its
 *   arguments are the expected ones) is a noisy trajectory: misread (`analystMisreadRate`), the analyst
 *   proposes the call on its next best token; read right, nothing.
 * - The erring analyst (`analystErrorRate`) keys the minibatch's most frequent missing call on the most
 *   common word of its inputs (`commonWordCallProposal`).
 *
 * A call rule's "answer", as the context (context.ts) and the failure summary compare it, is
 * `callKey(tool, args)`: `call <tool> <canonical JSON of the argument template>`.
 */
import type { Trajectory } from '../protocol/prompt.ts';
import { parseCallFindings } from '../protocol/tool-feedback.ts';
import {
  callRuleLine,
  canonicalJson,
  fillArgs,
  generalizeArgs,
  parseCallRuleLine,
  parseCallRules,
  triggerIn,
  type CallArgs,
  type CallRule,
} from './call-rules.ts';
import { appendBeforeProtected } from './skill-edit.ts';
import { isFailure } from './stage-io.ts';
import { tokenize, type Token } from './tokens.ts';

/** The identity of a call a rule makes: tool and argument template (placeholders kept). */
export function callKey(tool: string, args: CallArgs): string {
  return `call ${tool} ${canonicalJson(args)}`;
}

const isObject = (v: unknown): v is CallArgs => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A call proposal in the analyst's Proposal shape (analyst.ts): `answer` is the call's `callKey`. */
export interface CallProposal {
  token: string;
  answer: string;
  kind: 'add';
  op: 'append' | 'replace';
  target?: string;
  content: string;
  rule: string;
  support: number;
  call: { tool: string; args: CallArgs };
}

interface Need {
  t: Trajectory;
  haystack: string;
  /** The calls this failure misses, each by its key, with the template to write. */
  missing: Array<{ key: string; tool: string; args: CallArgs; concrete: unknown }>;
  wrong: Array<{ tool: string; args: unknown; expected: CallArgs }>;
}

function needsOf(trajectories: readonly Trajectory[]): Need[] {
  const out: Need[] = [];
  for (const t of trajectories) {
    if (!isFailure(t)) continue;
    const findings = parseCallFindings(t.feedback ?? '');
    const need: Need = { t, haystack: t.input.toLowerCase(), missing: [], wrong: [] };
    for (const f of findings) {
      if (f.kind === 'missing') {
        const args = generalizeArgs(isObject(f.args) ? f.args : {}, [t.input]);
        need.missing.push({ key: callKey(f.name, args), tool: f.name, args, concrete: f.args });
      } else if (f.kind === 'wrong' && isObject(f.expected)) {
        need.wrong.push({ tool: f.name, args: f.args, expected: f.expected });
      }
    }
    if (need.missing.length + need.wrong.length > 0) out.push(need);
  }
  return out;
}

/** Whether a failure has tool-call findings the call analyst reads. */
export function hasCallFindings(t: Trajectory): boolean {
  return isFailure(t) && parseCallFindings(t.feedback ?? '').some((f) => f.kind === 'missing' || f.kind === 'wrong');
}

/** The rule that makes this call for this input: its tool, its trigger in the input, its filled arguments equal. */
function ruleMaking(rules: readonly CallRule[], input: string, tool: string, args: unknown): CallRule | undefined {
  const want = canonicalJson(args ?? {});
  return rules.find((r) => {
    if (r.tool !== tool || r.source !== 'input' || triggerIn(r.triggers, input) === null) return false;
    const filled = fillArgs(r.args, [input]);
    return filled !== null && canonicalJson(filled) === want;
  });
}

export interface CallProposeOptions {
  rejected?: (tokenKey: string, answer: string) => boolean;
  warned?: (tokenKey: string) => boolean;
  misread?: (t: Trajectory) => boolean;
  /** analyst.ts `compareCandidates`. */
  compare: (a: { token: Token; pos: number; neg: number }, b: { token: Token; pos: number; neg: number }) => number;
}

function lineOrNull(triggers: string | readonly string[], tool: string, args: CallArgs, on: 'input' | 'result' = 'input'): string | null {
  try {
    return callRuleLine(triggers, tool, args, { on });
  } catch {
    return null; // a trigger or argument the grammar cannot write: no proposal
  }
}

/**
 * The call rules a failure minibatch teaches (before the L cap), deduplicated, in failure order (the caller
 * sorts by support). Exported for tests.
 */
export function proposeCallRules(skill: string, trajectories: readonly Trajectory[], o: CallProposeOptions): CallProposal[] {
  const rules = parseCallRules(skill);
  const needs = needsOf(trajectories);
  const failures = trajectories.filter(isFailure).map((t) => t.input.toLowerCase());
  const proposals: CallProposal[] = [];
  const seen = new Set<string>();
  const changed = new Set<string>();
  const missingSupport = (key: string, tokenKey: string | null) =>
    needs.filter((n) => n.missing.some((m) => m.key === key) && (tokenKey === null || n.haystack.includes(tokenKey))).length;

  const learnMissing = (n: Need, key: string, tool: string, args: CallArgs) => {
    const candidates: Array<{ token: Token; pos: number; neg: number }> = [];
    for (const token of tokenize(n.t.input)) {
      // a token that already triggers this call (a rule that did fire, or is being misread) is not proposed again
      if (rules.some((r) => r.tool === tool && canonicalJson(r.args) === canonicalJson(args) && r.triggers.some((x) => x.toLowerCase() === token.key))) continue;
      if (o.warned?.(token.key)) continue;
      const pos = missingSupport(key, token.key);
      const neg = failures.filter((h) => h.includes(token.key)).length - pos;
      candidates.push({ token, pos, neg });
    }
    candidates.sort(o.compare);
    const best = candidates[0];
    if (!best || o.rejected?.(best.token.key, key)) return;
    const dedupe = `+${best.token.key}\u0000${key}`;
    if (seen.has(dedupe)) return;
    const line = lineOrNull(best.token.text, tool, args);
    if (!line) return;
    seen.add(dedupe);
    proposals.push({ token: best.token.text, answer: key, kind: 'add', op: 'append', content: line, rule: line, support: best.pos, call: { tool, args } });
  };

  for (const n of needs) {
    for (const w of n.wrong) {
      const expected = generalizeArgs(w.expected, [n.t.input]);
      const key = callKey(w.tool, expected);
      const culprit = ruleMaking(rules, n.t.input, w.tool, w.args);
      if (!culprit) {
        learnMissing(n, key, w.tool, expected);
        continue;
      }
      if (changed.has(culprit.line) || canonicalJson(culprit.args) === canonicalJson(expected)) continue;
      const trigger = triggerIn(culprit.triggers, n.t.input)!;
      if (o.rejected?.(trigger.toLowerCase(), key)) continue;
      const line = lineOrNull(culprit.triggers, w.tool, expected, culprit.source);
      if (!line) continue;
      changed.add(culprit.line);
      const support = needs.filter((m) => m.wrong.some((x) => x.tool === w.tool && ruleMaking(rules, m.t.input, x.tool, x.args) === culprit)).length;
      proposals.push({ token: trigger, answer: key, kind: 'add', op: 'replace', target: culprit.line, content: line, rule: line, support, call: { tool: w.tool, args: expected } });
    }
    for (const m of n.missing) {
      const covered = ruleMaking(rules, n.t.input, m.tool, m.concrete ?? {});
      if (covered && !o.misread?.(n.t)) continue;
      learnMissing(n, m.key, m.tool, m.args);
    }
  }
  return proposals;
}

/** The erring analyst's call rule: the minibatch's most frequent missing call, keyed on `word`. */
export function commonWordCallProposal(skill: string, trajectories: readonly Trajectory[], word: Token): CallProposal | null {
  const needs = needsOf(trajectories);
  const counts = new Map<string, { tool: string; args: CallArgs; n: number }>();
  for (const n of needs) {
    for (const m of n.missing) {
      const c = counts.get(m.key);
      if (c) c.n++;
      else counts.set(m.key, { tool: m.tool, args: m.args, n: 1 });
    }
  }
  let top: { key: string; tool: string; args: CallArgs; n: number } | null = null;
  for (const [key, c] of counts) if (!top || c.n > top.n) top = { key, ...c };
  if (!top) return null;
  const rules = parseCallRules(skill);
  if (rules.some((r) => r.tool === top.tool && canonicalJson(r.args) === canonicalJson(top.args) && r.triggers.some((t) => t.toLowerCase() === word.key))) return null;
  const line = lineOrNull(word.text, top.tool, top.args);
  if (!line) return null;
  const support = Math.max(1, needs.filter((n) => n.haystack.includes(word.key) && n.missing.some((m) => m.key === top.key)).length);
  return { token: word.text, answer: top.key, kind: 'add', op: 'append', content: line, rule: line, support, call: { tool: top.tool, args: top.args } };
}

/**
 * Write call-rule lines into a whole skill (full-rewrite analysts, rewrite_skill): a line whose tool, source
 * and triggers equal an existing call rule's replaces that rule's line; a line already in the skill is
 * skipped; the others are appended together before the protected regions. One change line each.
 */
export function applyCallRuleLines(skill: string, lines: readonly string[]): { skill: string; changes: string[] } {
  let current = skill;
  const appended: string[] = [];
  const changes: string[] = [];
  const sameHead = (a: { tool: string; source: string; triggers: string[] }, b: { tool: string; source: string; triggers: string[] }) =>
    a.tool === b.tool && a.source === b.source && canonicalJson(a.triggers.map((t) => t.toLowerCase()).sort()) === canonicalJson(b.triggers.map((t) => t.toLowerCase()).sort());
  for (const line of lines) {
    const parsed = parseCallRuleLine(line);
    if (!parsed) continue;
    const rules = parseCallRules(current);
    if (rules.some((r) => r.line.trim() === line.trim()) || appended.includes(line)) continue;
    const old = rules.find((r) => sameHead(r, parsed));
    if (old) {
      const all = current.split('\n');
      all[old.lineIndex] = all[old.lineIndex]!.endsWith('\r') ? `${line}\r` : line;
      current = all.join('\n');
      changes.push(`Replaced call rule: ${old.line} with: ${line}`);
      continue;
    }
    appended.push(line);
    changes.push(`Added call rule: ${line}`);
  }
  if (appended.length > 0) current = appendBeforeProtected(current, appended.join('\n'));
  return { skill: current, changes };
}
