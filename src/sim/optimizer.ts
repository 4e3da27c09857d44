/**
 * The simulated optimizer roles. A request is an optimizer request when it asks for structured output
 * with a JSON-schema name that is a stage of STAGE_SCHEMAS, or (JSON mode / plain text) when its last user
 * message carries the stage header line. The sections of the prompt are read with the wire protocol of
 * src/optimizer/protocol.ts; every reply validates against the stage's schema.
 *
 * The analyst only reasons about rules (see rules.ts): for each failed trajectory it picks the token of
 * the input that best predicts the expected answer and proposes a rule mapping it to that answer.
 */
import {
  readBudget,
  readJsonBlocks,
  readStageHeader,
  readTag,
  readTrajectories,
  type Trajectory,
} from '../optimizer/protocol.ts';
import {
  EditSchema,
  STAGE_SCHEMAS,
  SkillCandidateSchema,
  SuggestionSchema,
  isStageName,
  type Edit,
  type SkillCandidate,
  type StageName,
  type Suggestion,
} from '../optimizer/schemas.ts';
import { SimHttpError } from './errors.ts';
import { unitHash } from './hash.ts';
import { isSpanSafe, parseRules, ruleLine, type Rule } from './rules.ts';
import { applyRuleMappings, placeRule } from './skill-edit.ts';
import type { SimMessage } from './target.ts';
import { tokenize, type Token } from './tokens.ts';
import { groupBy } from '../util/group.ts';
import { simulateDescriptionStage } from './describe.ts';

export interface OptimizerContext {
  seed: number;
  model: string;
  /** The full request messages (hashed for seeded decisions). */
  messages: readonly SimMessage[];
  /** Probability (0..1) that an error analyst proposes a rule on a common word instead. */
  analystErrorRate: number;
}

export const SLOW_UPDATE_TEXT =
  'Prefer the most specific matching rule; when no rule applies, say so plainly.';
export const META_SKILL_TEXT =
  'Accepted edits add one rule keyed on a distinctive type or API name shared by several failures with ' +
  'the same expected answer, or correct a rule whose answer conflicts with them. Rules keyed on common ' +
  'words are rejected by the gate. Keep edits small and specific.';

type Mode = 'patch' | 'rewrite' | 'full_rewrite';

function modeOf(stage: string): Mode {
  if (stage.endsWith('_full_rewrite')) return 'full_rewrite';
  if (stage.endsWith('_rewrite')) return 'rewrite';
  return 'patch';
}

/** The stage a request names, or null for a target request. Unknown names → HTTP 400. */
export function resolveStage(responseFormat: unknown, lastUserMessage: string): StageName | null {
  if (responseFormat && typeof responseFormat === 'object') {
    const rf = responseFormat as { type?: unknown; json_schema?: { name?: unknown } };
    if (rf.type === 'json_schema') {
      const name = rf.json_schema?.name;
      if (typeof name !== 'string' || name.length === 0) {
        throw new SimHttpError(400, 'response_format.json_schema.name is required', {
          param: 'response_format',
          code: 'invalid_schema',
        });
      }
      if (!isStageName(name)) {
        throw new SimHttpError(400, `simulated model: unknown structured-output schema '${name}' (not a SkillOpt stage)`, {
          param: 'response_format',
          code: 'unknown_schema',
        });
      }
      return name;
    }
  }
  const name = readStageHeader(lastUserMessage);
  if (name === null) return null;
  if (!isStageName(name)) {
    throw new SimHttpError(400, `simulated model: unknown SkillOpt stage '${name}' in the stage header`, {
      param: 'messages',
      code: 'unknown_stage',
    });
  }
  return name;
}

/** Reply of an optimizer stage (a value valid against STAGE_SCHEMAS[stage]). */
export function simulateStage(stage: StageName, text: string, ctx: OptimizerContext): unknown {
  let reply: unknown;
  if (stage.startsWith('description_')) reply = simulateDescriptionStage(stage, text);
  else if (stage.startsWith('analyst_error')) reply = analystError(text, modeOf(stage), ctx);
  else if (stage.startsWith('analyst_success')) reply = analystSuccess(text, modeOf(stage));
  else if (stage.startsWith('merge_')) reply = merge(stage, text);
  else if (stage === 'ranking' || stage === 'ranking_rewrite') reply = ranking(text);
  else if (stage === 'lr_autonomous') reply = lrAutonomous(text);
  else if (stage === 'rewrite_skill') reply = rewriteSkill(text);
  else if (stage === 'slow_update') {
    reply = { reasoning: 'simulated slow update: fixed guidance.', slow_update_content: SLOW_UPDATE_TEXT };
  } else if (stage === 'meta_skill') {
    reply = { reasoning: 'simulated meta skill: fixed optimizer memory.', meta_skill_content: META_SKILL_TEXT };
  } else if (stage === 'appendix_consolidate') reply = appendixConsolidate(text);
  else if (stage === 'judge') reply = judge(text);
  else throw new SimHttpError(400, `simulated model: unsupported stage '${stage}'`, { code: 'unknown_stage' });
  const checked = STAGE_SCHEMAS[stage].safeParse(reply);
  if (!checked.success) {
    throw new SimHttpError(500, `simulated model produced an invalid '${stage}' reply: ${checked.error.message}`, {
      type: 'server_error',
    });
  }
  return reply;
}

// ---------------------------------------------------------------------------------------------------
// Reading sections

/** A JSON section: the first fenced JSON block inside `<name>`, else the raw section text parsed. */
function readJson(text: string, name: string): unknown {
  const body = readTag(text, name);
  if (body === null) return undefined;
  const blocks = readJsonBlocks(body);
  if (blocks.length > 0) return blocks[0];
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** A section that may hold a fenced JSON value or plain text. */
function readValue(text: string, name: string): unknown {
  const body = readTag(text, name);
  if (body === null) return undefined;
  const blocks = readJsonBlocks(body);
  return blocks.length > 0 ? blocks[0] : body;
}

/** Whole skills the simulated optimizer writes end with one newline (the protocol strips it). */
function withTrailingNewline(skill: string): string {
  return skill.endsWith('\n') ? skill : `${skill}\n`;
}

function currentSkill(text: string): string {
  return readTag(text, 'current_skill') ?? '';
}

/** The answer text a rule would carry for an expected value (non-strings JSON-stringified), trimmed. */
export function answerText(expected: unknown): string {
  return (typeof expected === 'string' ? expected : JSON.stringify(expected) ?? String(expected)).trim();
}

function isFailure(t: Trajectory): boolean {
  const hard = t.score && typeof t.score.hard === 'number' ? t.score.hard : 0;
  return !(hard >= 0.5);
}

// ---------------------------------------------------------------------------------------------------
// Analysts

/** One rule the analyst proposes. */
export interface Proposal {
  token: string;
  answer: string;
  op: 'append' | 'replace';
  /** For `replace`: the exact existing line. */
  target?: string;
  /** The new rule line(s). */
  content: string;
  /** The rule line for the token alone (rewrite-mode instruction). */
  rule: string;
  /** Failures of the minibatch with this answer whose input contains the token. */
  support: number;
}

interface Scored {
  token: Token;
  pos: number;
  neg: number;
}

/**
 * The token that best predicts the failure's answer: most same-answer failures net of other-answer
 * failures containing it (so a word shared by every input loses to a signal its answer owns), then
 * fewer other-answer failures, then type-like, then longer, then alphabetical.
 */
function compareCandidates(a: Scored, b: Scored): number {
  return (
    b.pos - b.neg - (a.pos - a.neg) ||
    a.neg - b.neg ||
    Number(b.token.typeLike) - Number(a.token.typeLike) ||
    b.token.key.length - a.token.key.length ||
    (a.token.key < b.token.key ? -1 : a.token.key > b.token.key ? 1 : 0)
  );
}

function toProposal(rules: readonly Rule[], token: string, answer: string, support: number): Proposal | null {
  const placed = placeRule(rules, token, answer);
  const rule = ruleLine(token, answer);
  if (placed.kind === 'covered') return null;
  if (placed.kind === 'conflict') {
    return { token, answer, op: 'replace', target: placed.target, content: placed.content, rule, support };
  }
  return { token, answer, op: 'append', content: placed.content, rule, support };
}

/**
 * The analyst's proposals for a failure minibatch (before the L cap): one per failure, deduplicated by
 * token + answer, ordered by support (stable). Exported for tests and documentation.
 */
export function proposeRules(skill: string, trajectories: readonly Trajectory[]): Proposal[] {
  const rules = parseRules(skill);
  const failures = trajectories.filter(isFailure).map((t) => ({
    t,
    answer: answerText(t.expected),
    haystack: t.input.toLowerCase(),
  }));
  const proposals: Proposal[] = [];
  const seen = new Set<string>();
  const replacedLines = new Set<string>();
  for (const f of failures) {
    if (!isSpanSafe(f.answer)) continue;
    const candidates: Scored[] = [];
    for (const token of tokenize(f.t.input)) {
      if (rules.some((r) => r.answer === f.answer && r.triggers.some((tr) => tr.toLowerCase() === token.key))) continue;
      let pos = 0;
      let neg = 0;
      for (const g of failures) {
        if (!g.haystack.includes(token.key)) continue;
        if (g.answer === f.answer) pos++;
        else neg++;
      }
      candidates.push({ token, pos, neg });
    }
    candidates.sort(compareCandidates);
    const best = candidates[0];
    if (!best) continue;
    const key = `${best.token.key}\u0000${f.answer}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const proposal = toProposal(rules, best.token.text, f.answer, best.pos);
    if (!proposal) continue;
    if (proposal.op === 'replace') {
      if (replacedLines.has(proposal.target!)) continue;
      replacedLines.add(proposal.target!);
    }
    proposals.push(proposal);
  }
  return stableSortBy(proposals, (p) => p.support);
}

/** The seeded analyst mistake: a rule keyed on the most common word of all inputs. */
export function commonWordProposal(skill: string, trajectories: readonly Trajectory[]): Proposal | null {
  const failures = trajectories.filter(isFailure);
  if (failures.length === 0) return null;
  const df = new Map<string, { token: Token; count: number }>();
  for (const t of trajectories) {
    for (const token of tokenize(t.input)) {
      const entry = df.get(token.key);
      if (entry) entry.count++;
      else df.set(token.key, { token, count: 1 });
    }
  }
  const ranked = [...df.values()].sort(
    (a, b) =>
      b.count - a.count ||
      Number(a.token.typeLike) - Number(b.token.typeLike) ||
      (a.token.key < b.token.key ? -1 : a.token.key > b.token.key ? 1 : 0),
  );
  const word = ranked[0]?.token;
  if (!word) return null;
  const answers = new Map<string, number>();
  for (const f of failures) {
    const a = answerText(f.expected);
    if (isSpanSafe(a)) answers.set(a, (answers.get(a) ?? 0) + 1);
  }
  let answer: string | null = null;
  let most = 0;
  for (const [a, n] of answers) {
    if (n > most) {
      answer = a;
      most = n;
    }
  }
  if (answer === null) return null;
  const support = failures.filter(
    (f) => answerText(f.expected) === answer && f.input.toLowerCase().includes(word.key),
  ).length;
  return toProposal(parseRules(skill), word.text, answer, Math.max(1, support));
}

function failureSummary(failures: readonly Trajectory[], proposals: readonly Proposal[]) {
  const groups = groupBy(failures, (f) => answerText(f.expected), (f) => f.id);
  return [...groups].map(([answer, ids]) => ({
    failure_type: proposals.some((p) => p.answer === answer && p.op === 'replace') ? 'rule_wrong' : 'rule_missing',
    count: ids.length,
    description: `${ids.length} failure(s) whose expected answer is "${answer}" (tasks: ${ids.join(', ')})`,
  }));
}

function analystError(text: string, mode: Mode, ctx: OptimizerContext) {
  const skill = currentSkill(text);
  const trajectories = readTrajectories(text);
  const failures = trajectories.filter(isFailure);
  const limit = Math.max(0, readBudget(text) ?? 4);
  const erring = ctx.analystErrorRate > 0 && unitHash([ctx.seed, ctx.model, ctx.messages, 'analyst-error']) < ctx.analystErrorRate;
  let proposals: Proposal[];
  if (erring) {
    const p = commonWordProposal(skill, trajectories);
    proposals = p ? [p] : [];
  } else {
    proposals = proposeRules(skill, trajectories);
  }
  proposals = proposals.slice(0, limit);
  const reasoning =
    proposals.length === 0
      ? `simulated analyst: ${failures.length} failure(s), no new rule to propose.`
      : `simulated analyst: ${failures.length} failure(s); proposed ${proposals.length} rule(s) keyed on ` +
        `${proposals.map((p) => JSON.stringify(p.token)).join(', ')}.`;
  return {
    batch_size: trajectories.length,
    failure_summary: failureSummary(failures, proposals),
    patch: { reasoning, ...payload(skill, proposals, mode, 'failure') },
  };
}

function payload(skill: string, proposals: readonly Proposal[], mode: Mode, source: 'failure' | 'success') {
  if (mode === 'patch') {
    const edits: Edit[] = proposals.map((p) =>
      p.op === 'replace'
        ? { op: 'replace', target: p.target!, content: p.content, support_count: p.support, source_type: source }
        : { op: 'append', content: p.content, support_count: p.support, source_type: source },
    );
    return { edits };
  }
  if (mode === 'rewrite') {
    const revise_suggestions: Suggestion[] = proposals.map((p) => ({
      type: 'add_rule',
      title: `Map ${p.token} to ${p.answer}`,
      motivation:
        `${p.support} failure(s) mention ${p.token} and expect ${p.answer}` +
        (p.op === 'replace' ? '; an existing rule with this trigger gives another answer.' : '.'),
      instruction: p.rule,
      priority_hint: p.support >= 2 ? 'high' : 'medium',
      support_count: p.support,
      source_type: source,
    }));
    return { revise_suggestions };
  }
  if (proposals.length === 0) return { skill_candidates: [] as SkillCandidate[] };
  const { skill: newSkill, changes } = applyRuleMappings(
    skill,
    proposals.map((p) => ({ trigger: p.token, answer: p.answer })),
  );
  const skill_candidates: SkillCandidate[] = [
    {
      title: `Add ${proposals.length} rule(s)`,
      change_summary: changes,
      new_skill: withTrailingNewline(newSkill),
      support_count: proposals.reduce((n, p) => n + p.support, 0),
      source_type: source,
    },
  ];
  return { skill_candidates };
}

function analystSuccess(text: string, mode: Mode) {
  const trajectories = readTrajectories(text);
  const groups = new Map<string, number>();
  for (const t of trajectories) {
    const a = answerText(t.expected);
    groups.set(a, (groups.get(a) ?? 0) + 1);
  }
  const success_patterns = [...groups].map(([a, n]) => `${n} trajectory(ies) answered "${a}" correctly`);
  return {
    batch_size: trajectories.length,
    success_patterns,
    patch: {
      reasoning: 'simulated analyst: successes are already covered by the skill; nothing to add.',
      ...payload('', [], mode, 'success'),
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Merge, ranking, learning rate

type PayloadKey = 'edits' | 'revise_suggestions' | 'skill_candidates';

function payloadKey(mode: Mode): PayloadKey {
  return mode === 'patch' ? 'edits' : mode === 'rewrite' ? 'revise_suggestions' : 'skill_candidates';
}

/** Items of kind `key` found in a patch list / patch / analyst reply / bare item list. */
function collectItems(value: unknown, key: PayloadKey, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(value)) {
    for (const v of value) collectItems(v, key, out);
    return out;
  }
  if (!value || typeof value !== 'object') return out;
  const obj = value as Record<string, unknown>;
  if (Array.isArray(obj[key])) {
    for (const item of obj[key] as unknown[]) if (item && typeof item === 'object') out.push(item as Record<string, unknown>);
    return out;
  }
  if (obj.patch && typeof obj.patch === 'object') return collectItems(obj.patch, key, out);
  const looksLikeItem =
    key === 'edits' ? 'op' in obj : key === 'revise_suggestions' ? 'instruction' in obj : 'new_skill' in obj;
  if (looksLikeItem) out.push(obj);
  return out;
}

function norm(s: unknown): string {
  return typeof s === 'string' ? s.replace(/\s+/g, ' ').trim() : '';
}

function supportOf(item: { support_count?: unknown }): number {
  const n = item.support_count;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : 1;
}

/** Stable sort, descending by `score`. */
function stableSortBy<T>(items: readonly T[], score: (t: T) => number): T[] {
  return items
    .map((item, i) => ({ item, i, s: score(item) }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.item);
}

export function merge(stage: StageName, text: string) {
  const mode = modeOf(stage);
  const key = payloadKey(mode);
  const sections: { value: unknown; source: 'failure' | 'success' }[] = [];
  if (stage.startsWith('merge_final')) {
    sections.push({ value: readJson(text, 'failure_patches'), source: 'failure' });
    sections.push({ value: readJson(text, 'success_patches'), source: 'success' });
    if (sections.every((s) => s.value === undefined)) sections.push({ value: readJson(text, 'patches'), source: 'failure' });
  } else {
    sections.push({ value: readJson(text, 'patches'), source: stage.startsWith('merge_success') ? 'success' : 'failure' });
  }
  const items = sections.flatMap(({ value, source }) =>
    collectItems(value, key).map((raw) => ({ raw, source })),
  );
  if (mode === 'full_rewrite') return mergeCandidates(items);

  const schema = mode === 'patch' ? EditSchema : SuggestionSchema;
  const merged = new Map<string, Record<string, unknown> & { support_count: number }>();
  for (const { raw, source } of items) {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) continue;
    const item = parsed.data as Edit | Suggestion;
    const dedupe =
      mode === 'patch'
        ? [(item as Edit).op, norm((item as Edit).target), norm((item as Edit).content)].join('\u0000')
        : [(item as Suggestion).type, norm((item as Suggestion).instruction)].join('\u0000');
    const prev = merged.get(dedupe);
    if (prev) {
      prev.support_count += supportOf(item);
      if (typeof item.merge_level === 'number') {
        prev.merge_level = Math.max(Number(prev.merge_level ?? 0), item.merge_level);
      }
      continue;
    }
    merged.set(dedupe, cleanItem(item, mode, item.source_type ?? source));
  }
  const list = stableSortBy([...merged.values()], (i) => i.support_count);
  const reasoning = `simulated merge: ${items.length} item(s) → ${list.length} after deduplication.`;
  return mode === 'patch' ? { reasoning, edits: list } : { reasoning, revise_suggestions: list };
}

function cleanItem(
  item: Edit | Suggestion,
  mode: Mode,
  source: 'failure' | 'success',
): Record<string, unknown> & { support_count: number } {
  const content: Record<string, unknown> = {};
  if (mode === 'patch') {
    const e = item as Edit;
    content.op = e.op;
    if (e.target !== undefined) content.target = e.target;
    if (e.content !== undefined) content.content = e.content;
    if (e.reflection_type !== undefined) content.reflection_type = e.reflection_type;
  } else {
    const s = item as Suggestion;
    Object.assign(content, {
      type: s.type,
      title: s.title,
      motivation: s.motivation,
      instruction: s.instruction,
      priority_hint: s.priority_hint,
    });
  }
  return {
    ...content,
    support_count: supportOf(item),
    source_type: source,
    ...(item.merge_level !== undefined ? { merge_level: item.merge_level } : {}),
  };
}

function mergeCandidates(items: readonly { raw: Record<string, unknown>; source: 'failure' | 'success' }[]) {
  let best: { c: SkillCandidate; source: 'failure' | 'success'; rules: number } | null = null;
  let support = 0;
  const summary: string[] = [];
  for (const { raw, source } of items) {
    const parsed = SkillCandidateSchema.safeParse(raw);
    if (!parsed.success || parsed.data.new_skill.trim().length === 0) continue;
    const c = parsed.data;
    support += supportOf(c);
    for (const line of c.change_summary) if (!summary.includes(line)) summary.push(line);
    const rules = parseRules(c.new_skill).length;
    if (!best || rules > best.rules) best = { c, source, rules };
  }
  if (!best) return { reasoning: 'simulated merge: no candidate skill to merge.', skill_candidates: [] };
  const candidate: SkillCandidate = {
    title: best.c.title,
    change_summary: summary,
    new_skill: best.c.new_skill,
    support_count: support,
    source_type: best.c.source_type ?? best.source,
  };
  return {
    reasoning: `simulated merge: kept the candidate with the most rules (${best.rules}) of ${items.length}.`,
    skill_candidates: [candidate],
  };
}

function readPool(text: string): Record<string, unknown>[] {
  const pool = readJson(text, 'edit_pool');
  if (!Array.isArray(pool)) return [];
  return pool.map((p) => (p && typeof p === 'object' ? (p as Record<string, unknown>) : {}));
}

export function ranking(text: string) {
  const pool = readPool(text);
  const k = readBudget(text) ?? pool.length;
  const order = stableSortBy(
    pool.map((item, i) => ({ i, s: supportOf(item) })),
    (x) => x.s,
  ).map((x) => x.i);
  const selected_indices = order.slice(0, Math.max(0, k));
  return {
    reasoning: `simulated ranking: ${pool.length} item(s) by support, selected ${selected_indices.length} (budget ${k}).`,
    selected_indices,
  };
}

function lrAutonomous(text: string) {
  const pool = readPool(text);
  const strong = pool.filter((item) => supportOf(item) >= 2).length;
  const learning_rate = pool.length === 0 ? 0 : Math.max(1, strong);
  return {
    learning_rate,
    reasoning: `simulated learning rate: ${strong} of ${pool.length} item(s) have support >= 2.`,
    confidence: 0.5,
    risk_notes: pool.length - strong > 0 ? [`${pool.length - strong} item(s) are supported by a single failure`] : [],
  };
}

// ---------------------------------------------------------------------------------------------------
// Rewrite, appendix, judge

function rewriteSkill(text: string) {
  const skill = currentSkill(text);
  const suggestions = collectItems(readJson(text, 'suggestions'), 'revise_suggestions');
  const mappings: { trigger: string; answer: string }[] = [];
  for (const s of suggestions) {
    if (typeof s.instruction !== 'string') continue;
    for (const rule of parseRules(s.instruction)) {
      for (const trigger of rule.triggers) mappings.push({ trigger, answer: rule.answer });
    }
  }
  const { skill: rewritten, changes } = applyRuleMappings(skill, mappings);
  const new_skill = withTrailingNewline(rewritten);
  return {
    reasoning: `simulated rewrite: integrated ${changes.length} rule change(s) from ${suggestions.length} suggestion(s).`,
    change_summary: changes,
    new_skill,
  };
}

function noteKey(note: string): string {
  return note.replace(/\s+/g, ' ').trim().replace(/[.!?;:,]+$/, '').toLowerCase();
}

function appendixConsolidate(text: string) {
  const raw = readJson(text, 'appendix_notes');
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  const seen = new Set<string>();
  const appendix_notes: string[] = [];
  for (const item of list) {
    const note =
      typeof item === 'string'
        ? item
        : item && typeof item === 'object'
          ? String((item as Record<string, unknown>).note ?? (item as Record<string, unknown>).content ?? '')
          : '';
    const key = noteKey(note);
    if (key.length === 0 || seen.has(key)) continue;
    seen.add(key);
    appendix_notes.push(note.replace(/\s+/g, ' ').trim());
  }
  return { appendix_notes };
}

function normalizeForJudge(value: unknown): string {
  const s = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  return s.toLowerCase().replace(/\s+/g, ' ').trim();
}

function judge(text: string) {
  const expected = readValue(text, 'expected');
  const output = readValue(text, 'output');
  if (expected === undefined || output === undefined) {
    return { reasoning: 'simulated judge: the prompt lacks an <expected> or <output> section.', score: 0, pass: false };
  }
  const e = normalizeForJudge(expected);
  const o = normalizeForJudge(output);
  const pass = o.includes(e);
  return {
    reasoning: pass
      ? 'simulated judge: the expected answer occurs in the output.'
      : 'simulated judge: the expected answer does not occur in the output.',
    score: pass ? 1 : 0,
    pass,
  };
}
