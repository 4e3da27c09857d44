import OpenAI from 'openai';
import { afterAll } from 'vitest';
import { PLAIN_SIM_KNOBS } from '../../src/sim/knobs.ts';
import { startSimServer, type SimServer, type SimServerOptions } from '../../src/sim/server.ts';

/** Every mechanism of the simulated world off: spread into the options of a test that pins exact rule behaviour. */
export const PLAIN: SimServerOptions = { ...PLAIN_SIM_KNOBS };

/** Start a simulated server (the default world unless `opts` says otherwise) on an ephemeral loopback port, closed after the file's tests. */
export async function simServer(opts: SimServerOptions = {}): Promise<{ server: SimServer; client: OpenAI }> {
  const server = await startSimServer({ host: '127.0.0.1', port: 0, ...opts });
  afterAll(() => server.close());
  const client = new OpenAI({ apiKey: 'sk-simulated', baseURL: server.url, maxRetries: 0 });
  return { server, client };
}

export async function ask(client: OpenAI, system: string, user: string, model = 'mitko'): Promise<string> {
  const r = await client.chat.completions.create({
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
  });
  return r.choices[0]!.message.content ?? '';
}

/** A stage's user message: the stage header line, then the sections. */
export function stagePrompt(stage: string, ...sections: (string | null)[]): string {
  return [`# SkillOpt stage: ${stage}`, ...sections.filter((s): s is string => s !== null)].join('\n\n');
}

/** One optimizer stage call through the SDK with structured output named after the stage; the parsed JSON reply. */
export async function callStage(client: OpenAI, stage: string, user: string): Promise<unknown> {
  const r = await client.chat.completions.create({
    model: 'mitko',
    messages: [
      { role: 'system', content: `You are the SkillOpt ${stage} optimizer.` },
      { role: 'user', content: user },
    ],
    response_format: { type: 'json_schema', json_schema: { name: stage, schema: { type: 'object' }, strict: true } },
  });
  return JSON.parse(r.choices[0]!.message.content ?? 'null');
}
