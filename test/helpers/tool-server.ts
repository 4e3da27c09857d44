/**
 * A scripted OpenAI-compatible chat server on 127.0.0.1 for the tool-loop tests: each request is answered
 * by `reply(body)`, which may return content, tool calls (their `arguments` a JSON string, an object as some
 * local servers send, or invalid JSON) or both. Every request body is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ScriptedReply {
  content?: string | null;
  tool_calls?: Array<{ id: string; name: string; arguments: unknown }>;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

export interface ToolServer {
  baseURL: string;
  /** Chat request bodies, in arrival order. */
  requests: any[];
  close(): Promise<void>;
}

export async function startToolServer(reply: (body: any) => ScriptedReply): Promise<ToolServer> {
  const requests: any[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      if (!req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw);
      requests.push(body);
      let r: ScriptedReply;
      try {
        r = reply(body);
      } catch (e) {
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: String(e) } }));
        return;
      }
      const calls = r.tool_calls?.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      }));
      const message = {
        role: 'assistant',
        content: r.content ?? null,
        ...(calls?.length ? { tool_calls: calls } : {}),
      };
      const usage = r.usage ?? { prompt_tokens: 7, completion_tokens: 3 };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: 'chat.completion',
          created: 0,
          model: body.model,
          choices: [{ index: 0, message, finish_reason: calls?.length ? 'tool_calls' : 'stop' }],
          usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
        }),
      );
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
