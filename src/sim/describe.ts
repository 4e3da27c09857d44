/**
 * The simulated optimizer's description stages (`description_*`): it proposes edits to one skill's
 * frontmatter description from trigger failures, reasoning with the same routing the simulated target uses
 * (routing.ts), so description optimization runs offline.
 *
 * Analyst, per failure that concerns the optimized skill (`<skill_name>`):
 * - a missed trigger (the prompt expects the skill; it loaded none or another): add the fewest of the
 *   prompt's terms that lift the skill to the routing threshold and above its best rival. Terms shared by
 *   the most missed prompts of the minibatch come first, less those in false triggers and in the other
 *   skills' descriptions (a contested term does not tell the skills apart); then names that look like a type
 *   or API (`NullReferenceException`, `ASP.NET`), then longer ones. Words that say nothing about a domain
 *   ("cause", "problem", "wrong", …) are never proposed. One sentence: "Also use it for X or Y."
 * - a false trigger (the skill loaded on a prompt that expects none or another skill): when a list item of
 *   the description's opening sentence matched it and no missed prompt needs that item ("…, NuGet packages
 *   and …"), delete the item; otherwise exclude the prompt's term shared by the most false triggers and no missed prompt:
 *   "Do not use it for requests about Z."
 * Proposals are deduplicated, ordered by support, capped by `<edit_budget>` and by `<length_limit>`.
 * Merges and ranking are the patch-mode ones (union, dedupe, sum support; rank by support).
 */
import { readBudget, readJsonSection, readTag, readTrajectories, type Trajectory } from '../protocol/prompt.ts';
import type { Edit, StageName } from '../protocol/schemas.ts';
import { SimHttpError } from './errors.ts';
import { merge } from './merge.ts';
import { ranking } from './ranking.ts';
import {
  descriptionTerms,
  routeScores,
  routingTermForms,
  ROUTING_THRESHOLD,
  EXCLUSION_WEIGHT,
  type ListedSkill,
} from './routing.ts';

const NONE = 'none';
/** Terms a missed trigger's sentence may add beyond what loading the skill takes (shared ones only). */
const MARGIN = 2;

/** Words of a request that name no domain: a description writer does not key a skill on them. */
const GENERIC = new Set(
  (
    'cause root reason problem issue wrong fix work fail show cannot instance address operation value random randomly ' +
    'intermittent intermittently sometime whole start run call line happen going anyone idea expected unexpected ' +
    'suddenly weird strange odd answer attached below above following exactly find later first second ' +
    'minute hour day week month year yesterday today number result return throw thrown access service api app ' +
    'application program process project server production local locally machine team whole everything inside ' +
    'read reach reached block hundred thousand million billion'
  ).split(' '),
);

/** A surface form that looks like a type, API or product name (internal capitals, dots, digits, #/+). */
const typeLike = (form: string) => /[a-z][A-Z]|[A-Z].*[A-Z]|[.#+]|\d/.test(form);

/** The reply of a `description_*` stage. */
export function simulateDescriptionStage(stage: StageName, text: string): unknown {
  switch (stage) {
    case 'description_analyst_error':
      return descriptionAnalyst(text);
    case 'description_analyst_success': {
      const n = readTrajectories(text).length;
      return {
        batch_size: n,
        success_patterns: [`${n} prompt(s) routed as expected`],
        patch: { reasoning: 'simulated analyst: prompts routed right need no change to the description.', edits: [] },
      };
    }
    case 'description_merge_failure':
      return mergeDescriptionEdits(merge('merge_failure', text));
    case 'description_merge_success':
      return mergeDescriptionEdits(merge('merge_success', text));
    case 'description_merge_final':
      return mergeDescriptionEdits(merge('merge_final', text));
    case 'description_ranking':
      return ranking(text);
    default:
      throw new SimHttpError(400, `simulated model: unsupported stage '${stage}'`, { code: 'unknown_stage' });
  }
}

/**
 * The patch-mode merge, then one step further for descriptions: an added sentence whose terms the earlier
 * (better supported) ones already add is dropped, its support credited to the first of them.
 */
function mergeDescriptionEdits(merged: unknown): unknown {
  const edits = (merged as { edits?: unknown }).edits;
  if (!Array.isArray(edits)) return merged;
  type Item = { op?: unknown; content?: unknown; support_count?: unknown };
  const kept: Item[] = [];
  const added = new Set<string>();
  for (const e of edits as Item[]) {
    const terms = e.op === 'append' && typeof e.content === 'string' ? [...routingTermForms(e.content).keys()] : [];
    if (terms.length > 0 && terms.every((t) => added.has(t))) {
      // every term is added by the sentences kept so far: credit the first of them
      const first = kept.find(
        (k) =>
          k.op === 'append' &&
          typeof k.content === 'string' &&
          terms.some((t) => routingTermForms(k.content as string).has(t)),
      );
      if (first) first.support_count = Number(first.support_count ?? 1) + Number(e.support_count ?? 1);
      continue;
    }
    for (const t of terms) added.add(t);
    kept.push(e);
  }
  return { ...(merged as object), edits: kept };
}

const isFailure = (t: Trajectory) => !(typeof t.score?.hard === 'number' && t.score.hard >= 0.5);
const skillOf = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() !== '' && v.trim() !== NONE ? v.trim() : null;

interface Proposal {
  content: string;
  support: number;
  kind: 'add' | 'exclude' | 'remove';
  /** `remove`: the exact text of the description to delete. */
  target?: string;
}

const DELIMITER =
  /(,\s*including\s+|,\s*such as\s+|,\s*|;\s*|:\s*|\.(?:\s+|$)|\s+and\s+|\s+or\s+|\s+including\s+|\s+such as\s+)/i;

/**
 * The list item of a description's opening sentence that holds `term` (e.g. "NuGet packages" in "…, builds,
 * NuGet packages and …"), with one neighbouring separator, as the exact text to delete; null when the term
 * heads the sentence (deleting it would break it) or is not in a list item of it.
 */
export function removablePhrase(description: string, term: string): string | null {
  // only the opening sentence (the scope statement), never the trigger sentences added later
  const first = /^[\s\S]*?\.(?=\s|$)/.exec(description)?.[0] ?? description;
  const parts = first.split(DELIMITER);
  for (let i = 0; i < parts.length; i += 2) {
    if (!routingTermForms(parts[i]!).has(term)) continue;
    const before = parts[i - 1];
    const after = parts[i + 1];
    const joins = (d: string | undefined) => d !== undefined && /^(?:,\s*|\s+and\s+|\s+or\s+)$/i.test(d);
    if (joins(before)) return before! + parts[i]!;
    // the first item of a list ("…, including X, Y and Z"): the item and the comma after it
    const opensList =
      before !== undefined && /^(?:,\s*including\s+|,\s*such as\s+|:\s*|\s+including\s+|\s+such as\s+)$/i.test(before);
    if (opensList && /^,\s*$/.test(after ?? '')) return parts[i]! + after!;
    return null;
  }
  return null;
}

function orList(forms: readonly string[]): string {
  return forms.length <= 1 ? (forms[0] ?? '') : `${forms.slice(0, -1).join(', ')} or ${forms[forms.length - 1]}`;
}

function descriptionAnalyst(text: string) {
  const description = readTag(text, 'current_skill') ?? '';
  const name = (readTag(text, 'skill_name') ?? '').trim();
  const limit = Number.parseInt(readTag(text, 'length_limit') ?? '', 10) || 1024;
  const othersRaw = readJsonSection(text, 'other_skills');
  const others: ListedSkill[] = Array.isArray(othersRaw)
    ? othersRaw.filter((o): o is ListedSkill => !!o && typeof o.name === 'string' && typeof o.description === 'string')
    : [];
  const budget = Math.max(0, readBudget(text) ?? 4);
  const trajectories = readTrajectories(text);
  const failures = trajectories.filter(isFailure);
  const missed = failures.filter((t) => skillOf(t.expected) === name);
  const falseTriggers = failures.filter((t) => skillOf(t.output) === name && skillOf(t.expected) !== name);
  const { pos, neg } = descriptionTerms(description, name);
  const forms = new Map<Trajectory, Map<string, string>>(failures.map((t) => [t, routingTermForms(t.input)]));
  const count = (group: readonly Trajectory[], term: string) => group.filter((g) => forms.get(g)!.has(term)).length;
  const otherTerms = others.map((o) => descriptionTerms(o.description, o.name).pos);
  const contested = (term: string) => otherTerms.filter((p) => p.has(term)).length;
  type Candidate = { term: string; sup: number; pen: number; typed: boolean };
  const rank = (a: Candidate, b: Candidate) =>
    b.sup - b.pen - (a.sup - a.pen) ||
    Number(b.typed) - Number(a.typed) ||
    a.pen - b.pen ||
    b.term.length - a.term.length ||
    (a.term < b.term ? -1 : a.term > b.term ? 1 : 0);

  const proposals: Proposal[] = [];
  const seen = new Set<string>();
  // Missed prompts whose best new term is shared by the most others go first; a prompt that the sentences
  // planned so far already load gets none of its own (so a reply does not say the same thing twice).
  const planned = new Set<string>();
  const fresh = (t: string) => !pos.has(t) && !neg.has(t) && !GENERIC.has(t);
  const bestSupport = (f: Trajectory) =>
    Math.max(0, ...[...forms.get(f)!.keys()].filter(fresh).map((t) => count(missed, t)));
  const order = missed.map((f, i) => ({ f, i, best: bestSupport(f) })).sort((a, b) => b.best - a.best || a.i - b.i);
  for (const { f } of order) {
    const terms = forms.get(f)!;
    const own = [...terms.keys()];
    const matched = own.filter((t) => pos.has(t) || planned.has(t)).length;
    const excluded = own.filter((t) => neg.has(t)).length;
    const rival = Math.max(-Infinity, ...routeScores(f.input, others).map((r) => r.score));
    // the terms it takes to load the skill, plus up to MARGIN to spare (so prompts worded a little differently load it too)
    const required = Math.max(0, Math.max(ROUTING_THRESHOLD, rival + 1) - (matched - EXCLUSION_WEIGHT * excluded));
    if (required === 0) continue;
    const ranked = own
      .filter((t) => fresh(t) && !planned.has(t))
      .map((term) => ({
        term,
        sup: count(missed, term),
        pen: count(falseTriggers, term) + contested(term),
        typed: typeLike(terms.get(term)!),
      }))
      .sort(rank);
    // spare terms only when other missed prompts share them (a word of this prompt alone would not generalise)
    const candidates = [
      ...ranked.slice(0, required),
      ...ranked
        .slice(required)
        .filter((c) => c.sup >= 2 && c.pen === 0)
        .slice(0, MARGIN),
    ];
    if (candidates.length === 0) continue;
    for (const c of candidates) planned.add(c.term);
    proposals.push({
      kind: 'add',
      content: `Also use it for ${orList(candidates.map((c) => terms.get(c.term)!))}.`,
      support: Math.max(...candidates.map((c) => c.sup)),
    });
  }
  for (const f of falseTriggers) {
    const terms = forms.get(f)!;
    // an over-broad claim of the description that matched: delete its list item when no missed prompt needs it
    const broad = [...terms.keys()]
      .filter((t) => pos.has(t))
      .map((term) => ({ term, sup: count(falseTriggers, term), pen: count(missed, term), typed: false }))
      .filter((c) => c.pen === 0)
      .sort(rank)
      .map((c) => ({ ...c, target: removablePhrase(description, c.term) }))
      .find(
        (c) =>
          c.target !== null &&
          routingTermForms(c.target).size > 0 &&
          [...routingTermForms(c.target).keys()].every((t) => count(missed, t) === 0),
      );
    if (broad) {
      const key = `remove\u0000${broad.target}`;
      if (!seen.has(key)) {
        seen.add(key);
        proposals.push({ kind: 'remove', content: '', target: broad.target!, support: broad.sup });
      }
      continue;
    }
    const best = [...terms.keys()]
      .filter((t) => !pos.has(t) && !neg.has(t) && !GENERIC.has(t))
      // an exclusion names a technology or product: capitalised names first (`Java`, `NuGet`)
      .map((term) => ({
        term,
        sup: count(falseTriggers, term),
        pen: count(missed, term),
        typed: /^[A-Z]/.test(terms.get(term)!) || typeLike(terms.get(term)!),
      }))
      .filter((c) => c.sup > c.pen)
      .sort(rank)[0];
    if (!best) continue;
    const key = `exclude\u0000${best.term}`;
    if (seen.has(key)) continue;
    seen.add(key);
    proposals.push({
      kind: 'exclude',
      content: `Do not use it for requests about ${terms.get(best.term)!}.`,
      support: best.sup,
    });
  }
  // by support (stable), within the edit budget and the format's length limit
  const ordered = proposals
    .map((p, i) => ({ p, i }))
    .sort((a, b) => b.p.support - a.p.support || a.i - b.i)
    .map((x) => x.p);
  const kept: Proposal[] = [];
  let length = description.length;
  for (const p of ordered) {
    if (kept.length >= budget) break;
    if (
      p.kind === 'remove' &&
      kept.some((k) => k.kind === 'remove' && (k.target!.includes(p.target!) || p.target!.includes(k.target!)))
    )
      continue;
    if (p.kind !== 'remove' && length + 1 + p.content.length > limit) continue;
    length += p.kind === 'remove' ? -p.target!.length : 1 + p.content.length;
    kept.push(p);
  }
  const edits: Edit[] = kept.map((p) =>
    p.kind === 'remove'
      ? { op: 'delete', target: p.target!, support_count: p.support, source_type: 'failure' }
      : { op: 'append', content: p.content, support_count: p.support, source_type: 'failure' },
  );
  const adds = kept.filter((p) => p.kind === 'add').length;
  return {
    batch_size: trajectories.length,
    failure_summary: [
      ...(missed.length
        ? [
            {
              failure_type: 'missed_trigger',
              count: missed.length,
              description: `${missed.length} prompt(s) expected '${name}' but did not load it (tasks: ${missed.map((t) => t.id).join(', ')})`,
            },
          ]
        : []),
      ...(falseTriggers.length
        ? [
            {
              failure_type: 'false_trigger',
              count: falseTriggers.length,
              description: `${falseTriggers.length} prompt(s) loaded '${name}' but expected another skill or none (tasks: ${falseTriggers.map((t) => t.id).join(', ')})`,
            },
          ]
        : []),
    ],
    patch: {
      reasoning:
        kept.length === 0
          ? `simulated analyst: ${failures.length} failure(s), no description edit to propose for '${name}'.`
          : `simulated analyst: ${adds} trigger phrase(s) for missed prompts, ${kept.length - adds} removal(s) or exclusion(s) for false triggers of '${name}'.`,
      edits,
    },
  };
}
