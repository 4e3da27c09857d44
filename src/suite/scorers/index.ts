/** The scorer library (re-exported by the package root). Internal feedback helpers stay in their modules. */
export {
  ScorerError,
  runScorer,
  toScore,
  toScorer,
  validateTask,
  type JudgeRequest,
  type ScoreContext,
  type ScoreLike,
  type Scorer,
  type ScorerFn,
  type ScorerLike,
} from './types.ts';
export {
  exactMatch,
  includesAll,
  includesAny,
  normalizeText,
  regex,
  type ExactMatchOptions,
  type IncludesOptions,
  type PerTask,
  type RegexOptions,
} from './text.ts';
export { label, labelKey, labelMatcher, type LabelMention, type LabelOptions } from './label.ts';
export { extractNumbers, numeric, type NumericOptions } from './numeric.ts';
export {
  extractJson,
  formatIssues,
  formatPath,
  jsonEqual,
  jsonSchema,
  type JsonExtraction,
  type JsonSchemaOptions,
} from './json.ts';
export { llmJudge, type LlmJudgeOptions } from './llm-judge.ts';
export { JUDGE_STAGE, buildJudgeMessages, expectedAsText, judgeSystemPrompt } from './judge.ts';
export {
  threshold,
  weighted,
  type ThresholdOptions,
  type WeightedComponent,
  type WeightedOptions,
} from './combinators.ts';
export {
  argsSubset,
  finalState,
  mcpServers,
  noToolCalls,
  toolCallLimit,
  toolCalls,
  trajectoryCalls,
  type ArgsMatcher,
  type CallCountOptions,
  type ExpectedCall,
  type FinalStateOptions,
  type McpServersOptions,
  type ToolCallsOptions,
} from './tools.ts';
