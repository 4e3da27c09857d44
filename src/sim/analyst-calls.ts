/**
 * The simulated analyst's procedure learning (docs/simulated-model.md, "The simulated analyst"): call
 * rules (call-rules.ts) proposed from the tool-call findings of failed trajectories
 * (src/protocol/tool-feedback.ts), as a real analyst turns "read_file was never called" into a procedure
 * step.
 *
 * - A `missing call` becomes a call rule making that call when a predictive token of the input is present:
 *   the token chosen like an answer rule's (analyst.ts `compareCandidates`: most failures of the minibatch
 *   that miss the same call net of the failures naming it that do not), the arguments generalized
 *   (`generalizeCallArgs`: the input's first path, quoted string, number or id becomes that placeholder,
 *   as a whole value or inside a command), so the rule makes the call for every input of the kind.
 * - A `wrong arguments` finding becomes a `replace` of the call rule that made the wrong call (its tool,
 *   its trigger in the input, its arguments filled from the input equal to the wrong ones), keeping that
 *   rule's triggers, with the expected arguments generalized; with no such rule, it is learned like a
 *   missing call.
 * - An `out of order` finding (the call came before the one it must follow, both made by rules firing on
 *   the input, so in line order) becomes a `replace` of the lines from the early rule to the other one,
 *   with the early rule moved last (patch and full-rewrite modes; a rewrite suggestion cannot move a line).
 * - An `extra call` made by a call rule firing on the input narrows that rule (drops the trigger found in the
 *   input) or deletes it when that was its only trigger — unless a failure of the minibatch misses that call.
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
  fillText,
  fillToken,
  generalizeArgs,
  parseCallRuleLine,
  parseCallRules,
  triggerIn,
  type CallArgs,
  type CallRule,
} from './call-rules.ts';
import { appendBeforeProtected } from './skill-edit.ts';
import { isFailure } from './stage-io.ts';
import type { Proposal } from './proposal.ts';
import { tokenize, type Token } from './tokens.ts';

/** The identity of a call a rule makes: tool and argument template (placeholders kept). */
export function callKey(tool: string, args: CallArgs): string {
  return `call ${tool} ${canonicalJson(args)}`;
}

const isObject = (v: unknown): v is CallArgs => typeof v === 'object' && v !== null && !Array.isArray(v);

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');

/**
 * The arguments a rule should carry for a call the input asked for: `generalizeArgs` (a whole value that is
 * the input's first token of a kind becomes its placeholder), then, inside a longer string value such as
 * a command, each word-bounded occurrence of the input's first id, path, quoted string or number becomes
 * its placeholder (`"python train.py --config configs/local.yaml"` → `"… --config <path>"`), kept only when
 * filling the template from the input gives the value back.
 */
export function generalizeCallArgs(args: CallArgs, input: string): CallArgs {
  const kinds = ['id', 'path', 'string', 'number'] as const;
  const inside = (v: string): string => {
    let out = v;
    for (const kind of kinds) {
      const token = fillToken(kind, [input]);
      if (!token) continue;
      out = out.replace(new RegExp(`(?<=^|[\\s="'(,:])${escapeRe(token)}(?=$|[\\s"'),;])`, 'g'), `<${kind}>`);
    }
    return out !== v && fillText(out, [input]) === v ? out : v;
  };
  const gen = (v: unknown): unknown => {
    if (typeof v === 'string') return /^<(path|string|number|id)>$/.test(v) ? v : inside(v);
    if (Array.isArray(v)) return v.map(gen);
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, gen(x)]));
    return v;
  };
  return gen(generalizeArgs(args, [input])) as CallArgs;
}

/** A call proposal: a Proposal whose `answer` is the call's `callKey`. */
export type CallProposal = Proposal & { call: NonNullable<Proposal['call']> };

interface Need {
  t: Trajectory;
  haystack: string;
  /** The calls this failure misses, each by its key, with the template to write. */
  missing: Array<{ key: string; tool: string; args: CallArgs; concrete: unknown }>;
  wrong: Array<{ tool: string; args: unknown; expected: CallArgs }>;
  order: Array<{ tool: string; args: unknown; after: string }>;
  extra: Array<{ tool: string; args: unknown }>;
}

function needsOf(trajectories: readonly Trajectory[]): Need[] {
  const out: Need[] = [];
  for (const t of trajectories) {
    if (!isFailure(t)) continue;
    const findings = parseCallFindings(t.feedback ?? '');
    const need: Need = { t, haystack: t.input.toLowerCase(), missing: [], wrong: [], order: [], extra: [] };
    for (const f of findings) {
      if (f.kind === 'missing') {
        const args = generalizeCallArgs(isObject(f.args) ? f.args : {}, t.input);
        need.missing.push({ key: callKey(f.name, args), tool: f.name, args, concrete: f.args });
      } else if (f.kind === 'wrong' && isObject(f.expected)) {
        need.wrong.push({ tool: f.name, args: f.args, expected: f.expected });
      } else if (f.kind === 'extra') {
        need.extra.push({ tool: f.name, args: f.args });
      } else if (f.kind === 'order') {
        need.order.push({ tool: f.name, args: f.args, after: f.after });
      }
    }
    if (need.missing.length + need.wrong.length + need.order.length + need.extra.length > 0) out.push(need);
  }
  return out;
}

/** Whether a failure has tool-call findings the call analyst reads. */
export function hasCallFindings(t: Trajectory): boolean {
  return isFailure(t) && parseCallFindings(t.feedback ?? '').length > 0;
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

function lineOrNull(
  triggers: string | readonly string[],
  tool: string,
  args: CallArgs,
  on: 'input' | 'result' = 'input',
): string | null {
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
export function proposeCallRules(
  skill: string,
  trajectories: readonly Trajectory[],
  o: CallProposeOptions,
): CallProposal[] {
  const rules = parseCallRules(skill);
  const needs = needsOf(trajectories);
  const failures = trajectories.filter(isFailure).map((t) => t.input.toLowerCase());
  const proposals: CallProposal[] = [];
  const seen = new Set<string>();
  const changed = new Set<string>();
  const missingSupport = (key: string, tokenKey: string | null) =>
    needs.filter((n) => n.missing.some((m) => m.key === key) && (tokenKey === null || n.haystack.includes(tokenKey)))
      .length;

  const learnMissing = (n: Need, key: string, tool: string, args: CallArgs) => {
    const candidates: Array<{ token: Token; pos: number; neg: number }> = [];
    for (const token of tokenize(n.t.input)) {
      // a token that already triggers this call (a rule that did fire, or is being misread) is not proposed again
      if (
        rules.some(
          (r) =>
            r.tool === tool &&
            canonicalJson(r.args) === canonicalJson(args) &&
            r.triggers.some((x) => x.toLowerCase() === token.key),
        )
      )
        continue;
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
    proposals.push({
      token: best.token.text,
      answer: key,
      kind: 'add',
      op: 'append',
      content: line,
      rule: line,
      support: best.pos,
      call: { tool, args },
    });
  };

  for (const n of needs) {
    for (const w of n.wrong) {
      const expected = generalizeCallArgs(w.expected, n.t.input);
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
      const support = needs.filter((m) =>
        m.wrong.some((x) => x.tool === w.tool && ruleMaking(rules, m.t.input, x.tool, x.args) === culprit),
      ).length;
      proposals.push({
        token: trigger,
        answer: key,
        kind: 'add',
        op: 'replace',
        target: culprit.line,
        content: line,
        rule: line,
        support,
        call: { tool: w.tool, args: expected },
      });
    }
    for (const w of n.extra) {
      // the rule that made a call the task did not want: its trigger in this input is dropped
      const culprit = ruleMaking(rules, n.t.input, w.tool, w.args);
      if (!culprit || changed.has(culprit.line)) continue;
      const trigger = triggerIn(culprit.triggers, n.t.input)!;
      const key = callKey(w.tool, culprit.args);
      // a rule some failure of the minibatch misses is not removed for another's extra call
      if (needs.some((m) => m.missing.some((x) => x.key === key))) continue;
      const remaining = culprit.triggers.filter((t) => t.toLowerCase() !== trigger.toLowerCase());
      const line = remaining.length > 0 ? lineOrNull(remaining, w.tool, culprit.args, culprit.source) : '';
      if (line === null) continue;
      changed.add(culprit.line);
      const support = needs.filter((m) =>
        m.extra.some((x) => x.tool === w.tool && ruleMaking(rules, m.t.input, x.tool, x.args) === culprit),
      ).length;
      proposals.push({
        token: trigger,
        answer: key,
        kind: 'remove',
        op: line ? 'replace' : 'delete',
        target: culprit.line,
        content: line,
        // the mapping removed, as a rewrite's remove_rule suggestion states it
        rule: lineOrNull(trigger, w.tool, culprit.args, culprit.source) ?? culprit.line,
        support,
        call: { tool: w.tool, args: culprit.args },
      });
    }
    for (const w of n.order) {
      // both rules fire on the input, so they call in line order: move the early one just after the other
      const culprit = ruleMaking(rules, n.t.input, w.tool, w.args);
      const prior = rules.find(
        (r) => r.tool === w.after && r.source === 'input' && triggerIn(r.triggers, n.t.input) !== null,
      );
      if (!culprit || !prior || culprit.lineIndex > prior.lineIndex || changed.has(culprit.line)) continue;
      const trigger = triggerIn(culprit.triggers, n.t.input)!;
      const key = callKey(w.tool, culprit.args);
      if (o.rejected?.(trigger.toLowerCase(), key)) continue;
      const block = skill
        .split('\n')
        .slice(culprit.lineIndex, prior.lineIndex + 1)
        .map((l) => l.replace(/\r$/, ''));
      changed.add(culprit.line);
      const support = needs.filter((m) => m.order.some((x) => x.tool === w.tool && x.after === w.after)).length;
      proposals.push({
        token: trigger,
        answer: key,
        kind: 'add',
        op: 'replace',
        target: block.join('\n'),
        content: [...block.slice(1), block[0]!].join('\n'),
        rule: culprit.line,
        support,
        call: { tool: w.tool, args: culprit.args },
        reorder: true,
      });
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
export function commonWordCallProposal(
  skill: string,
  trajectories: readonly Trajectory[],
  word: Token,
): CallProposal | null {
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
  if (
    rules.some(
      (r) =>
        r.tool === top.tool &&
        canonicalJson(r.args) === canonicalJson(top.args) &&
        r.triggers.some((t) => t.toLowerCase() === word.key),
    )
  )
    return null;
  const line = lineOrNull(word.text, top.tool, top.args);
  if (!line) return null;
  const support = Math.max(
    1,
    needs.filter((n) => n.haystack.includes(word.key) && n.missing.some((m) => m.key === top.key)).length,
  );
  return {
    token: word.text,
    answer: top.key,
    kind: 'add',
    op: 'append',
    content: line,
    rule: line,
    support,
    call: { tool: top.tool, args: top.args },
  };
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
  const sameHead = (
    a: { tool: string; source: string; triggers: string[] },
    b: { tool: string; source: string; triggers: string[] },
  ) =>
    a.tool === b.tool &&
    a.source === b.source &&
    canonicalJson(a.triggers.map((t) => t.toLowerCase()).sort()) ===
      canonicalJson(b.triggers.map((t) => t.toLowerCase()).sort());
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

/**
 * Remove call-rule mappings from a whole skill (rewrite_skill's `remove_rule` suggestions): for each trigger
 * of each given line, the call rule with that tool, source, arguments and trigger loses the trigger, or is
 * deleted when it was its only one. One change line each.
 */
export function removeCallRuleMappings(skill: string, lines: readonly string[]): { skill: string; changes: string[] } {
  let current = skill;
  const changes: string[] = [];
  for (const line of lines) {
    const gone = parseCallRuleLine(line);
    if (!gone) continue;
    for (const trigger of gone.triggers) {
      const key = trigger.toLowerCase();
      const rule = parseCallRules(current).find(
        (r) =>
          r.tool === gone.tool &&
          r.source === gone.source &&
          canonicalJson(r.args) === canonicalJson(gone.args) &&
          r.triggers.some((t) => t.toLowerCase() === key),
      );
      if (!rule) continue;
      const all = current.split('\n');
      const remaining = rule.triggers.filter((t) => t.toLowerCase() !== key);
      const narrowed = remaining.length > 0 ? lineOrNull(remaining, rule.tool, rule.args, rule.source) : null;
      if (narrowed) {
        all[rule.lineIndex] = all[rule.lineIndex]!.endsWith('\r') ? `${narrowed}\r` : narrowed;
        changes.push(`Narrowed call rule: ${rule.line} to: ${narrowed}`);
      } else {
        all.splice(rule.lineIndex, 1);
        changes.push(`Removed call rule: ${rule.line}`);
      }
      current = all.join('\n');
    }
  }
  return { skill: current, changes };
}
