/**
 * `skillopt`: the authoring API used by `*.skill.test.ts` files: declare a suite, pick scorers.
 * The Vitest plugin lives in `skillopt/vitest`; the optimizer and CLI run behind `npx skillopt`.
 */
export { VERSION } from './version.ts';
export { defineSkillSuite, defaultMessages, type SkillSuite, type SkillSuiteOptions } from './suite/define.ts';
export { defineTriggerSuite, type TriggerCase, type TriggerSuiteOptions } from './suite/trigger.ts';
export type { Presentation } from './suite/agent.ts';
export * from './suite/scorers/index.ts';
export type { SkillTask, Score, ChatMessage, CaseRecord, SplitName, SplitSelector } from './types.ts';
export { tool, ToolError, type Tool, type ToolSet, type ToolContext } from './agent/tool.ts';
export type { TrajectoryStep, TrajectoryCall, TrajectoryResult, ToolCall } from './types.ts';
export type { RunHook, RunContext, RunModel, ChatReply } from './suite/tool-runner.ts';
export type { McpOptions, McpServerConfig, McpStdioServer, McpHttpServer, McpScope, McpCacheMode, McpSetupContext } from './mcp/config.ts';
export { McpRequestError, type McpClient, type McpClients, type McpToolResult, type McpResourceContents } from './mcp/client.ts';
export type { McpSkillSource } from './suite/define.ts';
