import OpenAI from 'openai';
import { afterAll } from 'vitest';
import { startSimServer, type SimServer, type SimServerOptions } from '../../src/sim/server.ts';

/** Start a simulated server on an ephemeral loopback port, closed after the file's tests. */
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
