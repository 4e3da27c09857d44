/**
 * Shared setup for the optimizer stage tests: an `OptimizerLLM` over a real model client (real `openai`
 * SDK, real HTTP on 127.0.0.1) pointed at the simulated model server or at the fault-injecting server,
 * plus small builders for scored cases, patches and temp dirs. Servers and clients are closed after
 * each test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestEnd } from '../helpers/cleanup.ts';
import { Accounting, createModelClient, type ModelClient, type RoleConfig } from '../../src/model/index.ts';
import { Budget } from '../../src/optimizer/budget.ts';
import { OptimizerLLM } from '../../src/optimizer/llm.ts';
import type { Item, Patch, SourceType } from '../../src/optimizer/patch.ts';
import { PromptLibrary } from '../../src/optimizer/prompts.ts';
import { readStageHeader } from '../../src/protocol/prompt.ts';
import { startSimServer, type SimServer, type SimServerOptions } from '../../src/sim/server.ts';
import type { CaseRecord } from '../../src/types.ts';
import { startFaultServer, type Behaviour, type FaultServer, type ScriptContext } from '../helpers/fault-server.ts';

export function optimizerRole(baseURL: string): RoleConfig {
  return {
    role: 'optimizer',
    backend: 'openai_compat',
    model: 'mitko',
    baseURL,
    apiKeyEnv: 'SKILLOPT_TEST_UNSET_KEY',
    temperature: null,
    maxTokens: 4096,
    timeoutMs: 10_000,
    retries: 0,
    retryBaseDelayMs: 1,
    retryMaxDelayMs: 1,
    concurrency: 4,
    structuredOutput: 'auto',
  };
}

export interface LLMHarness {
  llm: OptimizerLLM;
  accounting: Accounting;
  budget: Budget;
  /** Lines the OptimizerLLM logged. */
  logs: string[];
}

function harness(baseURL: string, opts: { maxCalls?: number; prompts?: PromptLibrary }): LLMHarness {
  const accounting = new Accounting();
  const client: ModelClient = createModelClient(optimizerRole(baseURL), { accounting, env: {} });
  onTestEnd(() => client.close());
  const budget = new Budget(accounting, opts.maxCalls ?? 0, 0);
  const logs: string[] = [];
  const llm = new OptimizerLLM(client, opts.prompts ?? new PromptLibrary(), budget, (l) => logs.push(l));
  return { llm, accounting, budget, logs };
}

/** An OptimizerLLM answered by the simulated model server. */
export async function simLLM(
  opts: SimServerOptions & { maxCalls?: number } = {},
): Promise<LLMHarness & { server: SimServer }> {
  const server = await startSimServer({ host: '127.0.0.1', port: 0, logRequests: false, ...opts });
  onTestEnd(() => server.close());
  return { ...harness(server.url, opts), server };
}

/** The stage a fault-server request asks for (structured-output schema name, else the stage header). */
export function stageOf(ctx: ScriptContext): string {
  const name = ctx.body?.response_format?.json_schema?.name;
  if (typeof name === 'string') return name;
  const messages: Array<{ role: string; content: string }> = ctx.body?.messages ?? [];
  const user = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  return readStageHeader(user) ?? 'target';
}

/** The stage's user message of a fault-server request (the first one: a re-ask appends another). */
export function userOf(ctx: ScriptContext): string {
  const messages: Array<{ role: string; content: string }> = ctx.body?.messages ?? [];
  return messages.find((m) => m.role === 'user')?.content ?? '';
}

/** An OptimizerLLM answered by a scripted fault server (`reply` decides per request). */
export async function faultLLM(
  reply: (ctx: ScriptContext) => Behaviour | Promise<Behaviour>,
  opts: { maxCalls?: number; prompts?: PromptLibrary } = {},
): Promise<LLMHarness & { server: FaultServer }> {
  const server = await startFaultServer((ctx) => reply(ctx));
  onTestEnd(() => server.close());
  return { ...harness(server.baseURL, opts), server };
}

export const json = (value: unknown): Behaviour => ({ content: JSON.stringify(value) });
export const GARBAGE: Behaviour = {
  content: 'I looked at the failures and I think the skill is mostly fine as it is.',
};

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `skillopt-opt-${prefix}-`));
  onTestEnd(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A scored case as the reporter hands it to the optimizer. */
export function record(
  id: string,
  o: { input?: string; output?: string; expected?: unknown; hard?: number; pass?: boolean; error?: boolean } = {},
): CaseRecord {
  const hard = o.hard ?? (o.pass ? 1 : 0);
  return {
    suite: 'unit',
    id,
    split: 'train',
    task_type: null,
    skill_hash: 'x',
    messages: [
      { role: 'system', content: 'SKILL TEXT' },
      { role: 'user', content: o.input ?? `input of ${id}` },
    ],
    output: o.output ?? 'unknown',
    expected: o.expected ?? 'disk',
    hard,
    soft: hard,
    pass: o.error ? false : (o.pass ?? hard >= 0.5),
    feedback: `feedback of ${id}`,
    usage: {
      calls: 1,
      attempts: 1,
      prompt_tokens: 1,
      completion_tokens: 1,
      cached_prompt_tokens: 0,
      reasoning_tokens: null,
      cost: null,
      call_ms: 0,
    },
    latency_ms: 1,
    cached: false,
    error_kind: o.error ? 'infra' : null,
    error: o.error ? 'endpoint down' : null,
    simulated: true,
  };
}

export function edit(content: string, support = 1, source: SourceType = 'failure'): Item {
  return { op: 'append', content, support_count: support, source_type: source };
}

export function patch(tag: string, items: Item[], source: SourceType = 'failure'): Patch {
  return { tag, source_type: source, reasoning: '', items };
}
