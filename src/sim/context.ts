/**
 * What a simulated analyst reads from its prompt besides the skill and the trajectories, parsed from the
 * prompt text only (the wire format of src/protocol/prompt.ts and the skill's protected regions):
 * - the rejected-edit buffer (`<step_buffer>`): the rules of edits rejected earlier in the epoch, as the
 *   buffer lists them (`append content="- When the input mentions `x`, answer `y`."`, or a suggestion's
 *   instruction); a call rule (call-rules.ts) by its triggers and tool (`call <tool>`);
 * - notes: the optimizer memory (`<meta_skill>`) and the slow-update guidance in the skill (between
 *   `<!-- SLOW_UPDATE_START -->` and `<!-- SLOW_UPDATE_END -->`). Their presence is what cuts the analyst's
 *   error rate; a backticked term on a line that warns (avoid, do not, never, too general …) is a trigger
 *   the analyst will not propose.
 */
import { readTag } from '../protocol/prompt.ts';
import { extractSlowUpdate } from '../skill/regions.ts';
import { parseRuleLine } from './rules.ts';
import { parseCallRuleLine } from './call-rules.ts';

export interface RuleKey {
  /** Lower-cased trigger. */
  trigger: string;
  /** An answer rule's answer; a call rule's `call <tool>`. */
  answer: string;
}

export interface AnalystContext {
  /** Rules carried by edits the step buffer lists as rejected. */
  rejected: RuleKey[];
  /** Whether meta-skill notes or slow-update guidance are in the prompt. */
  notes: boolean;
  /** Lower-cased terms the notes warn against. */
  flagged: string[];
}

const WARNING = /\b(?:avoid|avoided|do not|don't|never|too general|over-general|overly general)\b/i;
const SPAN = /`([^`\n]+)`/g;

/** The rules of one listed edit: its content (after `content="`) or the whole line, split at list dashes. */
export function rulesOfListedEdit(line: string): RuleKey[] {
  const at = line.indexOf('content="');
  const body = at >= 0 ? line.slice(at + 'content="'.length).replace(/"\s*$/, '') : line;
  const out: RuleKey[] = [];
  // describeItem folds a multi-line edit into one line: its rule lines start with "- "
  for (const piece of body.split(/(?:^|\s)-\s+(?=\S)/)) {
    // a call rule: keyed on its tool only, since the listing may cut its arguments short
    const call = parseCallRuleLine(`- ${piece}`);
    if (call) {
      for (const t of call.triggers) out.push({ trigger: t.toLowerCase(), answer: `call ${call.tool}` });
      continue;
    }
    const rule = parseRuleLine(piece);
    if (rule) for (const t of rule.triggers) out.push({ trigger: t.toLowerCase(), answer: rule.answer });
  }
  return out;
}

/** The rules of the edits that `<step_buffer>` lists as rejected ("Rejected edits", "Edits removed by …"). */
export function rejectedRules(text: string): RuleKey[] {
  const buffer = readTag(text, 'step_buffer');
  if (buffer === null) return [];
  const out: RuleKey[] = [];
  let inRejected = false;
  for (const line of buffer.split('\n')) {
    if (/Rejected edits|Edits removed/i.test(line)) {
      inRejected = true;
      continue;
    }
    if (!inRejected) continue;
    if (!/^\s*\d+\.\s/.test(line)) {
      inRejected = false;
      continue;
    }
    out.push(...rulesOfListedEdit(line.replace(/^\s*\d+\.\s/, '')));
  }
  return out;
}

/** Backticked terms on the lines of `notes` that warn, lower-cased, deduplicated. */
export function flaggedTerms(notes: string): string[] {
  const out = new Set<string>();
  for (const line of notes.split('\n')) {
    if (!WARNING.test(line)) continue;
    SPAN.lastIndex = 0;
    for (let m = SPAN.exec(line); m; m = SPAN.exec(line)) {
      const term = m[1]!.trim().toLowerCase();
      if (term) out.add(term);
    }
  }
  return [...out];
}

export function readContext(text: string, skill: string): AnalystContext {
  const meta = (readTag(text, 'meta_skill') ?? '').trim();
  const slow = extractSlowUpdate(skill);
  const notes = [meta, slow].filter((n) => n.length > 0).join('\n');
  return { rejected: rejectedRules(text), notes: notes.length > 0, flagged: flaggedTerms(notes) };
}
