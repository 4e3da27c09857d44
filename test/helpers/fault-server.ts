/**
 * A programmable, fault-injecting OpenAI-compatible server on 127.0.0.1 (ephemeral port), for tests that
 * exercise the real `openai` SDK over real HTTP.
 *
 *   const srv = await startFaultServer([{ status: 503 }, { reset: true }, { content: 'hi' }]);
 *   // srv.baseURL === 'http://127.0.0.1:<port>/v1'
 *
 * The script is a queue of behaviours (one per chat request; when empty, `options.fallback` or a normal
 * "ok" reply) or a function of the request. Every request is recorded (Authorization redacted to its
 * presence) and the maximum number of requests in flight is tracked. `close()` destroys hanging sockets.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface UsageShape {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
}

export type Behaviour = (
  | { status: number; body?: unknown; retryAfter?: string; retryAfterMs?: string; headers?: Record<string, string> }
  | { hang: true }
  | { reset: true }
  | { truncated: true }
  /** Send 200 headers and half the body, then stall (never end) until closed. */
  | { stallBody: true }
  | { nonJson: true | 'text' }
  | { emptyChoices: true }
  | { noMessage: true }
  | {
      content: string | null;
      reasoning_content?: string;
      reasoning?: string;
      usage?: UsageShape | null;
      finish_reason?: string;
      model?: string;
    }
) & {
  /** Wait this long before acting (the request counts as in flight meanwhile). */
  delayMs?: number;
};

/** A behaviour that only waits, then sends the default reply. */
export type DelayOnly = { delayMs: number };

export interface RecordedRequest {
  index: number;
  method: string;
  path: string;
  /** Path with the query string. */
  url: string;
  /** Lower-cased request headers; `authorization` is replaced by "[present]". */
  headers: Record<string, string>;
  hasAuthorization: boolean;
  /** True when `options.expectApiKey` is set and the bearer token matched it. */
  authOk: boolean | null;
  body: any;
  rawBody: string;
}

export interface ScriptContext {
  /** Index of this chat request among all chat requests (0-based). */
  index: number;
  body: any;
  path: string;
}

export type Script =
  | Array<Behaviour | DelayOnly>
  | ((ctx: ScriptContext) => Behaviour | DelayOnly | Promise<Behaviour | DelayOnly>);

export interface FaultServerOptions {
  /** Answer HTTP 400 to requests using this response_format type (before consuming the script). */
  rejectResponseFormat?: 'json_schema' | 'json_object' | 'both';
  /** Behaviour when the queue is empty. Default: `{ content: 'ok' }`. */
  fallback?: Behaviour | DelayOnly;
  /** Model name reported in replies (default: the requested model). */
  model?: string;
  /** When set, requests whose bearer token differs get HTTP 401. The key itself is never recorded. */
  expectApiKey?: string;
}

/** Listen on a free loopback port, tracking open sockets so close() can end them; resolves to the port. */
async function listenOnLoopback(server: Server, sockets: Set<Socket>): Promise<number> {
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

export interface FaultServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  /** Chat-completion requests only. */
  readonly chatRequests: RecordedRequest[];
  readonly inFlight: number;
  readonly maxInFlight: number;
  close(): Promise<void>;
}

const DEFAULT_USAGE: UsageShape = { prompt_tokens: 11, completion_tokens: 7 };

function completion(
  model: string,
  b: {
    content: string | null;
    reasoning_content?: string;
    reasoning?: string;
    usage?: UsageShape | null;
    finish_reason?: string;
    model?: string;
  },
) {
  const message: Record<string, unknown> = { role: 'assistant', content: b.content };
  if (b.reasoning_content !== undefined) message['reasoning_content'] = b.reasoning_content;
  if (b.reasoning !== undefined) message['reasoning'] = b.reasoning;
  const usage = b.usage === null ? undefined : (b.usage ?? DEFAULT_USAGE);
  return {
    id: 'chatcmpl-fault',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: b.model ?? model,
    choices: [{ index: 0, message, finish_reason: b.finish_reason ?? 'stop', logprobs: null }],
    ...(usage
      ? { usage: { ...usage, total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens } }
      : {}),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export async function startFaultServer(script: Script = [], options: FaultServerOptions = {}): Promise<FaultServer> {
  const queue = Array.isArray(script) ? [...script] : undefined;
  const requests: RecordedRequest[] = [];
  const chatRequests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let inFlight = 0;
  let maxInFlight = 0;
  let chatIndex = 0;
  let closed = false;

  const next = async (ctx: ScriptContext): Promise<Behaviour | DelayOnly> => {
    if (queue) return queue.shift() ?? options.fallback ?? { content: 'ok' };
    return (script as Exclude<Script, unknown[]>)(ctx);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let body: any;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined) continue;
      headers[k.toLowerCase()] =
        k.toLowerCase() === 'authorization' || k.toLowerCase() === 'api-key' ? '[present]' : String(v);
    }
    const auth =
      req.headers.authorization ?? (req.headers['api-key'] ? `Bearer ${String(req.headers['api-key'])}` : undefined);
    const authOk = options.expectApiKey === undefined ? null : auth === `Bearer ${options.expectApiKey}`;
    const path = (req.url ?? '/').split('?')[0]!;
    const rec: RecordedRequest = {
      index: requests.length,
      method: req.method ?? 'GET',
      path,
      url: req.url ?? '/',
      headers,
      hasAuthorization: auth !== undefined,
      authOk,
      body,
      rawBody,
    };
    requests.push(rec);

    if (req.method === 'GET' && path.endsWith('/models')) {
      sendJson(res, 200, {
        object: 'list',
        data: [{ id: options.model ?? 'fault-model', object: 'model', owned_by: 'test' }],
      });
      return;
    }
    if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
      sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'not_found' } });
      return;
    }
    chatRequests.push(rec);
    if (authOk === false) {
      sendJson(res, 401, {
        error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
      });
      return;
    }
    const rf = body?.response_format?.type as string | undefined;
    const reject = options.rejectResponseFormat;
    if (rf && reject && (reject === 'both' ? rf === 'json_schema' || rf === 'json_object' : rf === reject)) {
      sendJson(res, 400, {
        error: {
          message: `response_format type '${rf}' is not supported by this server`,
          type: 'invalid_request_error',
          param: 'response_format',
        },
      });
      return;
    }
    const model = options.model ?? (typeof body?.model === 'string' ? body.model : 'fault-model');
    const b = (await next({ index: chatIndex++, body, path })) as Behaviour;
    if (b.delayMs) await sleep(b.delayMs);
    if (closed) return;

    if ('hang' in b) return; // never answer; close() destroys the socket
    if ('reset' in b) {
      req.socket.destroy();
      return;
    }
    if ('truncated' in b) {
      const full = JSON.stringify(completion(model, { content: 'this reply is cut short' }));
      const part = full.slice(0, Math.floor(full.length / 2));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(full)) });
      res.write(part, () => req.socket.end());
      return;
    }
    if ('stallBody' in b) {
      const full = JSON.stringify(completion(model, { content: 'this reply never finishes' }));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(full)) });
      res.write(full.slice(0, 20));
      return;
    }
    if ('nonJson' in b) {
      const text = '<html><body>502 Bad Gateway (proxy)</body></html>';
      res.writeHead(200, {
        'content-type': b.nonJson === 'text' ? 'text/html' : 'application/json',
        'content-length': String(Buffer.byteLength(text)),
      });
      res.end(text);
      return;
    }
    if ('emptyChoices' in b) {
      sendJson(res, 200, {
        id: 'chatcmpl-empty',
        object: 'chat.completion',
        created: 1_700_000_000,
        model,
        choices: [],
        usage: DEFAULT_USAGE,
      });
      return;
    }
    if ('noMessage' in b) {
      sendJson(res, 200, {
        id: 'chatcmpl-nomsg',
        object: 'chat.completion',
        created: 1_700_000_000,
        model,
        choices: [{ index: 0, finish_reason: 'stop' }],
      });
      return;
    }
    if ('status' in b) {
      const headers: Record<string, string> = { ...(b.headers ?? {}) };
      if (b.retryAfter !== undefined) headers['retry-after'] = b.retryAfter;
      if (b.retryAfterMs !== undefined) headers['retry-after-ms'] = b.retryAfterMs;
      const errBody = b.body ?? {
        error: {
          message: `injected HTTP ${b.status}`,
          type: b.status >= 500 ? 'server_error' : 'invalid_request_error',
        },
      };
      if (typeof errBody === 'string') {
        res.writeHead(b.status, {
          'content-type': 'text/plain',
          'content-length': String(Buffer.byteLength(errBody)),
          ...headers,
        });
        res.end(errBody);
      } else {
        sendJson(res, b.status, errBody, headers);
      }
      return;
    }
    if ('content' in b) {
      sendJson(res, 200, completion(model, b));
      return;
    }
    sendJson(res, 200, completion(model, { content: 'ok' })); // DelayOnly
  };

  const server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      inFlight--;
    };
    res.on('close', finish); // also fires when the socket is destroyed (reset, hang + close())
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed)
        sendJson(res, 500, { error: { message: `fault server bug: ${String(err)}` } });
    });
  });
  const port = await listenOnLoopback(server, sockets);

  return {
    port,
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
      }),
  };
}

/** What a fault proxy does with one chat request. */
export type ProxyFault =
  /** Forward it and return the reply as it came. */
  | { pass: true }
  /** Answer this status without forwarding (429 with `retry-after-ms` when `retryAfterMs` is set). */
  | { status: number; retryAfterMs?: number }
  /** Destroy the socket without forwarding or answering (a connection reset). */
  | { reset: true }
  /** Forward it, then hold the reply this long before sending it (a slow reply). */
  | { slowMs: number }
  /** Forward it, then cut the reply's message content in half (valid HTTP and JSON, truncated model text). */
  | { truncateContent: true };

export interface ProxyRequest {
  /** The parsed request body. */
  body: any;
  /** How many chat requests with this exact body the proxy received before this one (0: the first). */
  seen: number;
  /** A stable hash of the raw body: the same request always gets the same one, whatever the order. */
  hash: number;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseURL: string;
  /** Chat-completion requests received (the HTTP attempts the client sent). */
  readonly requests: number;
  /** Chat requests passed on to the upstream server. */
  readonly forwarded: number;
  /** Requests that got each kind of fault: `status_429`, `status_503`, `reset`, `slow`, `truncated`. */
  readonly faults: Readonly<Record<string, number>>;
  /** Hold the next chat request for which `match` is true (it is never answered): resolves when it arrives. */
  holdWhen(match: (r: ProxyRequest) => boolean): Promise<ProxyRequest>;
  close(): Promise<void>;
}

/** FNV-1a over the body's bytes: a cheap, stable choice of which requests get a fault. */
function bodyHash(raw: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < raw.length; i++) {
    h ^= raw.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * A counting, fault-injecting proxy on 127.0.0.1 in front of an OpenAI-compatible server (the simulated
 * one): `plan` decides per chat request, as a function of the request alone (body, hash, how often the
 * same body came before), so the faults a run meets do not depend on the order its requests arrive in.
 * Other paths are forwarded untouched. `holdWhen` parks one matching request forever: a test can kill
 * the client at that exact point, with that request in flight.
 */
export async function startFaultProxy(
  upstreamBaseURL: string,
  plan: (r: ProxyRequest) => ProxyFault,
): Promise<FaultProxy> {
  const upstream = new URL(upstreamBaseURL);
  const sockets = new Set<Socket>();
  const seenBodies = new Map<string, number>();
  const faults: Record<string, number> = {};
  const holds: Array<{ match: (r: ProxyRequest) => boolean; resolve: (r: ProxyRequest) => void }> = [];
  const timers = new Set<NodeJS.Timeout>();
  let requests = 0;
  let forwarded = 0;
  const count = (kind: string) => (faults[kind] = (faults[kind] ?? 0) + 1);

  const forward = (
    req: IncomingMessage,
    raw: Buffer,
  ): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (v !== undefined && k !== 'host' && k !== 'connection') headers[k] = String(v);
      headers['content-length'] = String(raw.length);
      const path = upstream.pathname.replace(/\/v1\/?$/, '') + (req.url ?? '/');
      const up = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const out: Record<string, string> = {};
            for (const [k, v] of Object.entries(res.headers))
              if (v !== undefined && k !== 'connection' && k !== 'keep-alive' && k !== 'transfer-encoding')
                out[k] = String(v);
            resolve({ status: res.statusCode ?? 502, headers: out, body: Buffer.concat(chunks) });
          });
          res.on('error', reject);
        },
      );
      up.on('error', reject);
      up.end(raw);
    });

  const send = (res: ServerResponse, r: { status: number; headers: Record<string, string>; body: Buffer }) => {
    res.writeHead(r.status, { ...r.headers, 'content-length': String(r.body.length) });
    res.end(r.body);
  };

  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const raw = Buffer.concat(chunks);
      const path = (req.url ?? '/').split('?')[0]!;
      if (req.method !== 'POST' || !path.endsWith('/chat/completions')) return send(res, await forward(req, raw));
      requests++;
      const text = raw.toString('utf8');
      const seen = seenBodies.get(text) ?? 0;
      seenBodies.set(text, seen + 1);
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const info: ProxyRequest = { body, seen, hash: bodyHash(text) };
      const held = holds.findIndex((h) => h.match(info));
      if (held >= 0) {
        holds.splice(held, 1)[0]!.resolve(info);
        return; // never answered; close() destroys the socket
      }
      const f = plan(info);
      if ('status' in f) {
        count(`status_${f.status}`);
        const errBody = Buffer.from(
          JSON.stringify({
            error: {
              message: `injected HTTP ${f.status}`,
              type: f.status >= 500 ? 'server_error' : 'rate_limit_error',
            },
          }),
        );
        return send(res, {
          status: f.status,
          headers: {
            'content-type': 'application/json',
            ...(f.retryAfterMs !== undefined ? { 'retry-after-ms': String(f.retryAfterMs) } : {}),
          },
          body: errBody,
        });
      }
      if ('reset' in f) {
        count('reset');
        req.socket.destroy();
        return;
      }
      forwarded++;
      const reply = await forward(req, raw);
      if ('slowMs' in f) {
        count('slow');
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => (timers.delete(t), resolve()), f.slowMs);
          timers.add(t);
        });
      }
      if ('truncateContent' in f && reply.status === 200) {
        const completion = JSON.parse(reply.body.toString('utf8'));
        const message = completion.choices?.[0]?.message;
        if (typeof message?.content === 'string') {
          count('truncated');
          message.content = message.content.slice(0, Math.floor(message.content.length / 2));
          reply.body = Buffer.from(JSON.stringify(completion));
        }
      }
      send(res, reply);
    })().catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed)
        sendJson(res, 502, { error: { message: `fault proxy: ${String(err)}`, type: 'proxy_error' } });
    });
  });
  const port = await listenOnLoopback(server, sockets);
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return requests;
    },
    get forwarded() {
      return forwarded;
    },
    get faults() {
      return { ...faults };
    },
    holdWhen: (match) => new Promise((resolve) => holds.push({ match, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
      }),
  };
}
