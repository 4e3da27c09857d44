/** The simulated OpenAI-compatible model server (DESIGN §7) and its building blocks. */
export {
  RULE_JOINER_ARROWS,
  RULE_JOINER_WORDS,
  isSpanSafe,
  matchRule,
  parseRuleLine,
  parseRules,
  ruleLine,
  type Rule,
  type RuleMatch,
} from './rules.ts';
export { STOPWORDS, isTypeLike, tokenize, type Token } from './tokens.ts';
export { UNKNOWN_ANSWER, simulateTarget, type SimMessage, type TargetOptions, type TargetReply } from './target.ts';
export {
  META_SKILL_TEXT,
  SLOW_UPDATE_TEXT,
  answerText,
  commonWordProposal,
  proposeRules,
  resolveStage,
  simulateStage,
  type OptimizerContext,
  type Proposal,
} from './optimizer.ts';
export { appendBeforeProtected, applyRuleMappings, placeRule, type RulePlacement } from './skill-edit.ts';
export { SimHttpError } from './errors.ts';
export {
  SIM_CREATED,
  resolveSimConfig,
  simulateChatCompletion,
  startSimServer,
  type ChatCompletion,
  type SimCompletionResult,
  type SimConfig,
  type SimServer,
  type SimServerOptions,
  type SimStats,
} from './server.ts';
