/**
 * The simulated optimizer roles. A request is an optimizer request when it asks for structured output
 * with a JSON-schema name that is a stage of STAGE_SCHEMAS, or (JSON mode / plain text) when its last user
 * message carries the stage header line. The sections of the prompt are read with the wire protocol of
 * src/protocol/prompt.ts; every reply validates against the stage's schema.
 *
 * Analysts: analyst.ts; merges: merge.ts; ranking and learning rate: ranking.ts; slow update and meta
 * skill: notes.ts; compress: compress.ts; rewrite, appendix and judge below.
 */
import { readStageHeader } from '../protocol/prompt.ts';
import { STAGE_SCHEMAS, isStageName, type StageName } from '../protocol/schemas.ts';
import { analystError, analystSuccess, REMOVE_INSTRUCTION } from './analyst.ts';
import { simulateDescriptionStage } from './describe.ts';
import { SimHttpError } from './errors.ts';
import type { SimKnobs } from './knobs.ts';
import type { ModelBudget } from './analyst-budget.ts';
import { collectItems, merge } from './merge.ts';
import { compress } from './compress.ts';
import { metaSkill, slowUpdate } from './notes.ts';
import { lrAutonomous, ranking } from './ranking.ts';
import { parseRules } from './rules.ts';
import { isCallRuleLine } from './call-rules.ts';
import { applyCallRuleLines, removeCallRuleMappings } from './analyst-calls.ts';
import { applyRuleMappings, removeRuleMappings } from './skill-edit.ts';
import { currentSkill, modeOf, readJson, readValue, withTrailingNewline } from './stage-io.ts';

export { SLOW_UPDATE_TEXT, META_SKILL_TEXT } from './notes.ts';

/** What the stages' seeded decisions depend on besides the prompt: the seed, the model and the optimizer's knobs. */
export interface OptimizerContext
  extends Pick<
    SimKnobs,
    | 'seed'
    | 'analystErrorRate'
    | 'analystMisreadRate'
    | 'analystContextRecall'
    | 'analystNotesEffect'
    | 'analystGeneralize'
    | 'rankerAccuracy'
  > {
  model: string;
  analystBudgetCompress?: number;
  /** A model id's attention budget in this server's world (the analyst of several models reads it: analyst-budget.ts). */
  budgetOf?: (model: string) => ModelBudget | null;
}

/** The stage a request names, or null for a target request. Unknown names → HTTP 400. */
export function resolveStage(responseFormat: unknown, stageInput: string): StageName | null {
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
        throw new SimHttpError(
          400,
          `simulated model: unknown structured-output schema '${name}' (not a SkillOpt stage)`,
          {
            param: 'response_format',
            code: 'unknown_schema',
          },
        );
      }
      return name;
    }
  }
  const name = readStageHeader(stageInput);
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
  else if (stage.startsWith('analyst_success')) reply = analystSuccess(text, modeOf(stage), ctx);
  else if (stage.startsWith('merge_')) reply = merge(stage, text);
  else if (stage === 'ranking' || stage === 'ranking_rewrite') reply = ranking(text, ctx);
  else if (stage === 'lr_autonomous') reply = lrAutonomous(text);
  else if (stage === 'rewrite_skill') reply = rewriteSkill(text);
  else if (stage === 'slow_update') reply = slowUpdate(text);
  else if (stage === 'meta_skill') reply = metaSkill(text);
  else if (stage === 'appendix_consolidate') reply = appendixConsolidate(text);
  else if (stage === 'compress') reply = compress(text);
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
// Rewrite, appendix, judge

/** The rewrite: `remove_rule` suggestions (REMOVE_INSTRUCTION + a rule line) first, then the rules the others carry. */
function rewriteSkill(text: string) {
  const skill = currentSkill(text);
  const suggestions = collectItems(readJson(text, 'suggestions'), 'revise_suggestions');
  const adds: { trigger: string; answer: string }[] = [];
  const removes: { trigger: string; answer: string }[] = [];
  const callLines: string[] = [];
  const callRemoves: string[] = [];
  for (const s of suggestions) {
    if (typeof s.instruction !== 'string') continue;
    const into = s.type === 'remove_rule' && s.instruction.startsWith(REMOVE_INSTRUCTION) ? removes : adds;
    // a call rule (analyst-calls.ts) replaces the call rule of the same trigger(s) and tool, or is appended
    if (into === adds && isCallRuleLine(s.instruction.trim())) callLines.push(s.instruction.trim());
    if (into === removes) {
      const line = s.instruction.slice(REMOVE_INSTRUCTION.length).trim();
      if (isCallRuleLine(line)) callRemoves.push(line);
    }
    for (const rule of parseRules(s.instruction)) {
      for (const trigger of rule.triggers) into.push({ trigger, answer: rule.answer });
    }
  }
  const unCalled = removeCallRuleMappings(skill, callRemoves);
  const removed = removeRuleMappings(unCalled.skill, removes);
  const answered = applyRuleMappings(removed.skill, adds);
  const added = applyCallRuleLines(answered.skill, callLines);
  const changes = [...unCalled.changes, ...removed.changes, ...answered.changes, ...added.changes];
  return {
    reasoning: `simulated rewrite: integrated ${changes.length} rule change(s) from ${suggestions.length} suggestion(s).`,
    change_summary: changes,
    new_skill: withTrailingNewline(added.skill),
  };
}

function noteKey(note: string): string {
  return note
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.!?;:,]+$/, '')
    .toLowerCase();
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
  const s = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
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
