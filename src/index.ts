/**
 * `skillopt`: what a `*.skill.test.ts` file uses: define a suite, pick its scorers, give the target tools.
 * Every export is listed in docs/api.md (test/package/exports.test.ts pins the list). The Vitest plugin is
 * `skillopt/vitest`, the run files' schemas `skillopt/runfiles`; the optimizer and the CLI run behind
 * `npx skillopt`.
 */
// suites
export { defineSkillSuite, type SkillSuite, type SkillSuiteOptions } from './suite/define.ts';
export { defineTriggerSuite, type TriggerCase, type TriggerSuiteOptions } from './suite/trigger.ts';
export type { Presentation } from './suite/agent.ts';
export type { ChatMessage, SkillTask } from './types.ts';
// scorers
export { exactMatch, includesAll, includesAny, regex } from './suite/scorers/text.ts';
export { label } from './suite/scorers/label.ts';
export { numeric } from './suite/scorers/numeric.ts';
export { jsonSchema } from './suite/scorers/json.ts';
export { llmJudge } from './suite/scorers/llm-judge.ts';
export { threshold, weighted } from './suite/scorers/combinators.ts';
export { finalState, mcpServers, noToolCalls, toolCallLimit, toolCalls } from './suite/scorers/tools.ts';
export type { ScoreContext, Scorer, ScorerLike } from './suite/scorers/types.ts';
export type { Score } from './types.ts';
// tools and agent runs
export { tool, ToolError, type Tool, type ToolContext, type ToolSet } from './agent/tool.ts';
export type { TrajectoryStep } from './types.ts';
export type { ChatReply, RunContext, RunHook, RunModel } from './suite/tool-runner.ts';
// MCP servers as a suite's tools (docs/agents.md#mcp)
export type { McpOptions } from './mcp/config.ts';
export type { McpClient } from './mcp/client.ts';
