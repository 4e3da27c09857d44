/** The simulated model server on its own thread, as a session host starts it. */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { startSimServerThread } from '../../src/sim/thread.ts';
import { ask } from './helpers.ts';

describe('simulated model server thread', () => {
  it('serves the openai SDK, counts requests, logs through the host and stops on close', async () => {
    const lines: string[] = [];
    const sim = await startSimServerThread({
      host: '127.0.0.1',
      port: 0,
      models: ['mitko'],
      log: (l) => lines.push(l),
    });
    expect(sim.url).toBe(`http://127.0.0.1:${sim.port}/v1`);
    const client = new OpenAI({ apiKey: 'sk-simulated', baseURL: sim.url, maxRetries: 0 });
    const rule = 'When the input mentions `FooError`, answer `bar`.';
    expect(await ask(client, rule, 'we saw FooError at startup')).toBe('bar');
    expect(await ask(client, rule, 'nothing to see')).toBe('unknown');
    expect(await sim.stats()).toEqual({ requests: 2, byStage: { target: 2 }, byModel: { mitko: 2 } });
    await sim.close();
    expect(lines.some((l) => l.includes('simulated'))).toBe(true);
    expect(lines.at(-1)).toContain('stopped');
    await expect(ask(client, rule, 'FooError')).rejects.toThrow('Connection error.');
  });

  it('a port in use is a one-line error, and the thread ends', async () => {
    const first = await startSimServerThread({ host: '127.0.0.1', port: 0 });
    try {
      await expect(startSimServerThread({ host: '127.0.0.1', port: first.port })).rejects.toThrow(
        new RegExp(`simulated model server.*${first.port}`),
      );
    } finally {
      await first.close();
    }
  });
});
