/**
 * The simulated OpenAI-compatible model server (docs/simulated-model.md): a real HTTP server on node:http that answers
 * `POST /v1/chat/completions` (target role or optimizer stages), `GET /v1/models`, `GET /v1/models/:id`
 * and `GET /v1/sim/stats`, in the OpenAI wire format. It is deterministic: the same options and the same
 * request give a byte-identical reply, whatever the order or concurrency of requests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SkillOptError } from '../util/errors.ts';
import { SimHttpError } from './errors.ts';
import { digest } from './hash.ts';
import { DEFAULT_SIM_KNOBS, resolveKnobs, type SimKnobs } from './knobs.ts';
import { resolveStage, simulateStage } from './optimizer.ts';
import { simulateTarget, type SimMessage } from './target.ts';
import { LOAD_SKILL_TOOL_NAME, simulateRouting } from './routing.ts';
import { firstUserMessage, lastUserMessage } from '../util/messages.ts';
import { SIMULATED_FINGERPRINT, contentText } from '../model/wire.ts';

export interface SimServerOptions extends Partial<SimKnobs> {
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Port; 0 (default) = ephemeral. */
  port?: number;
  /** Accepted model ids; empty (default) = any. */
  models?: string[];
  /** Delay before each successful chat completion reply, in ms (errors are immediate); default 0. */
  latencyMs?: number;
  /** Receives the banner and one line per request (every line says "simulated"). */
  log?: (line: string) => void;
  /** Log one line per request (default true); the in-process server of a run logs only start and stop. */
  logRequests?: boolean;
}

export interface SimStats {
  /** Chat completion requests accepted (valid body, known model and stage). */
  requests: number;
  /** By optimizer stage, or `target`. */
  byStage: Record<string, number>;
  byModel: Record<string, number>;
}

export interface SimServer {
  /** Base URL ending in /v1, for the `openai` SDK's `baseURL`. */
  url: string;
  host: string;
  port: number;
  /** The startup line (also sent to `log`). */
  banner: string;
  close(): Promise<void>;
  stats(): SimStats;
  resetStats(): void;
}

/** The resolved knobs of a simulated model (unset knobs: DEFAULT_SIM_KNOBS, the realistic world). */
export interface SimConfig extends SimKnobs {
  models: string[];
}

/** `created` of every completion: fixed, so replies are byte-identical. */
export const SIM_CREATED = 1_700_000_000;
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  system_fingerprint: string;
  choices: {
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      refusal: null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    };
    logprobs: null;
    finish_reason: 'stop' | 'tool_calls';
  }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export interface SimCompletionResult {
  completion: ChatCompletion;
  /** Optimizer stage, or `target`. */
  stage: string;
  model: string;
}

function approxTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/**
 * Answer one chat completion request body (already JSON-parsed). Throws SimHttpError for a request the
 * server must refuse. Pure: no I/O, no clock, no state.
 */
export function simulateChatCompletion(body: unknown, cfg: SimConfig): SimCompletionResult {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new SimHttpError(400, 'The request body must be a JSON object.', { code: 'invalid_request' });
  }
  const req = body as Record<string, unknown>;
  if (typeof req.model !== 'string' || req.model.length === 0) {
    throw new SimHttpError(400, "Missing required parameter: 'model'.", { param: 'model', code: 'missing_required_parameter' });
  }
  const model = req.model;
  if (!Array.isArray(req.messages) || req.messages.length === 0) {
    throw new SimHttpError(400, "Missing required parameter: 'messages' (a non-empty array).", {
      param: 'messages',
      code: 'missing_required_parameter',
    });
  }
  if (req.stream === true) {
    throw new SimHttpError(400, 'The simulated model server does not support stream: true.', {
      param: 'stream',
      code: 'unsupported_parameter',
    });
  }
  if (cfg.models.length > 0 && !cfg.models.includes(model)) {
    throw new SimHttpError(
      404,
      `The model '${model}' does not exist on this simulated model server (serves: ${cfg.models.join(', ')}).`,
      { code: 'model_not_found', param: 'model' },
    );
  }
  const messages: SimMessage[] = req.messages.map((m, i) => {
    if (!m || typeof m !== 'object' || typeof (m as { role?: unknown }).role !== 'string') {
      throw new SimHttpError(400, `messages[${i}] must be an object with a string 'role'.`, {
        param: `messages[${i}]`,
        code: 'invalid_value',
      });
    }
    return { role: (m as { role: string }).role, content: contentText((m as { content?: unknown }).content) };
  });
  const lastUser = lastUserMessage(messages);
  // A stage's input is the prompt its conversation was opened with: a re-ask sends the whole conversation
  // (the first reply and the correction request after it), and is answered as the first request was.
  const stageInput = firstUserMessage(messages);
  const stage = resolveStage(req.response_format, stageInput);
  let content: string;
  let loadSkill: string | null = null;
  if (stage === null) {
    // A seeded request samples unless it asks for temperature 0 (then its answer is stable across seeds).
    const sample = typeof req.seed === 'number' && req.temperature !== 0 ? req.seed : undefined;
    // Agent presentation: a turn that offers `load_skill` first decides which listed skill to load.
    const routed = simulateRouting({ messages, tools: req.tools }, lastUser, { seed: cfg.seed, model, routingNoise: cfg.routingNoise, ...(sample === undefined ? {} : { sample }) });
    if (typeof routed === 'string') {
      loadSkill = routed;
      content = JSON.stringify({ name: routed });
    } else {
      content = simulateTarget(messages, model, sample === undefined ? cfg : { ...cfg, sample }).content;
    }
  } else {
    const reply = simulateStage(stage, stageInput, { ...cfg, model });
    content = JSON.stringify(reply);
  }
  const promptChars = messages.reduce((n, m) => n + m.content.length, 0);
  const prompt_tokens = approxTokens(promptChars);
  const completion_tokens = approxTokens(content.length);
  const completion: ChatCompletion = {
    id: `chatcmpl-sim-${digest([cfg.seed, model, stage, messages, content]).slice(0, 24)}`,
    object: 'chat.completion',
    created: SIM_CREATED,
    model,
    system_fingerprint: SIMULATED_FINGERPRINT,
    choices: [
      loadSkill === null
        ? { index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }
        : {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              refusal: null,
              tool_calls: [{ id: `call_${digest([cfg.seed, model, messages, content]).slice(0, 16)}`, type: 'function', function: { name: LOAD_SKILL_TOOL_NAME, arguments: content } }],
            },
            logprobs: null,
            finish_reason: 'tool_calls',
          },
    ],
    usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
  };
  return { completion, stage: stage ?? 'target', model };
}

/** Resolve and validate options (throws SkillOptError naming the bad option). */
export function resolveSimConfig(opts: SimServerOptions = {}): SimConfig {
  const knobs: Partial<SimKnobs> = {};
  for (const k of Object.keys(DEFAULT_SIM_KNOBS) as (keyof SimKnobs)[]) if (opts[k] !== undefined) knobs[k] = opts[k];
  return { models: [...(opts.models ?? [])], ...resolveKnobs(knobs) };
}

function sendJson(res: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-skillopt-simulated': '1',
    ...extraHeaders,
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new SimHttpError(413, `Request body larger than ${MAX_BODY_BYTES} bytes.`, { code: 'request_too_large' }));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function formatUrl(host: string, port: number): string {
  const h = host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}/v1`;
}

/** Start the simulated model server. A port in use (or any listen error) → SkillOptError. */
export async function startSimServer(opts: SimServerOptions = {}): Promise<SimServer> {
  const cfg = resolveSimConfig(opts);
  const host = opts.host ?? '127.0.0.1';
  const requestedPort = opts.port ?? 0;
  if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) {
    throw new SkillOptError(`simulated model server: port must be an integer 0..65535, got ${requestedPort}`);
  }
  const latencyMs = opts.latencyMs ?? 0;
  if (!Number.isFinite(latencyMs) || latencyMs < 0) {
    throw new SkillOptError(`simulated model server: latencyMs must be a non-negative number, got ${latencyMs}`);
  }
  const log = opts.log;
  let stats: SimStats = { requests: 0, byStage: {}, byModel: {} };
  const pending = new Set<{ timer: NodeJS.Timeout; res: ServerResponse }>();
  let closing = false;

  const count = (stage: string, model: string) => {
    stats.requests++;
    stats.byStage[stage] = (stats.byStage[stage] ?? 0) + 1;
    stats.byModel[model] = (stats.byModel[model] ?? 0) + 1;
  };

  const later = (res: ServerResponse, fn: () => void) => {
    if (latencyMs <= 0) return fn();
    const entry = {
      timer: setTimeout(() => {
        pending.delete(entry);
        fn();
      }, latencyMs),
      res,
    };
    pending.add(entry);
  };

  const modelIds = () => (cfg.models.length > 0 ? cfg.models : ['simulated']);
  const modelObject = (id: string) => ({ id, object: 'model', created: SIM_CREATED, owned_by: SIMULATED_FINGERPRINT });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
    const line = (status: number, detail: string) => {
      if (opts.logRequests !== false || status >= 400) log?.(`[simulated] ${method} ${path} ${status} ${detail}`.trimEnd());
    };
    const fail = (err: SimHttpError, extra: Record<string, string> = {}) => {
      line(err.status, `${err.code ?? err.type}: ${err.message}`);
      sendJson(res, err.status, err.body(), extra);
    };
    try {
      if (path === '/v1/chat/completions') {
        if (method !== 'POST') return fail(new SimHttpError(405, `Method ${method} not allowed on ${path}; use POST.`, { code: 'method_not_allowed' }), { allow: 'POST' });
        const raw = await readBody(req);
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          return fail(new SimHttpError(400, 'The request body is not valid JSON.', { code: 'invalid_json' }));
        }
        const result = simulateChatCompletion(body, cfg);
        count(result.stage, result.model);
        later(res, () => {
          line(200, `model=${result.model} role=${result.stage === 'target' ? 'target' : `optimizer stage=${result.stage}`} tokens=${result.completion.usage.total_tokens}`);
          sendJson(res, 200, result.completion);
        });
        return;
      }
      if (path === '/v1/models' || path.startsWith('/v1/models/')) {
        if (method !== 'GET') return fail(new SimHttpError(405, `Method ${method} not allowed on ${path}; use GET.`, { code: 'method_not_allowed' }), { allow: 'GET' });
        if (path === '/v1/models') {
          line(200, '');
          return sendJson(res, 200, { object: 'list', data: modelIds().map(modelObject) });
        }
        const id = decodeURIComponent(path.slice('/v1/models/'.length));
        if (cfg.models.length > 0 && !cfg.models.includes(id)) {
          return fail(new SimHttpError(404, `The model '${id}' does not exist on this simulated model server.`, { code: 'model_not_found', param: 'model' }));
        }
        line(200, '');
        return sendJson(res, 200, modelObject(id));
      }
      if (path === '/v1/sim/stats') {
        if (method !== 'GET') return fail(new SimHttpError(405, `Method ${method} not allowed on ${path}; use GET.`, { code: 'method_not_allowed' }), { allow: 'GET' });
        line(200, '');
        return sendJson(res, 200, { simulated: true, ...snapshot() });
      }
      return fail(new SimHttpError(404, `Unknown path ${path} on the simulated model server.`, { code: 'not_found' }));
    } catch (err) {
      if (err instanceof SimHttpError) return fail(err);
      return fail(new SimHttpError(500, `simulated model server error: ${err instanceof Error ? err.message : String(err)}`, { type: 'server_error' }));
    }
  };

  const snapshot = (): SimStats => ({
    requests: stats.requests,
    byStage: { ...stats.byStage },
    byModel: { ...stats.byModel },
  });

  const server = createServer((req, res) => {
    if (closing) {
      res.destroy();
      return;
    }
    void handle(req, res);
  });
  server.keepAliveTimeout = 30_000;
  server.maxHeadersCount = 200;

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const where = `${host}:${requestedPort}`;
      if (err.code === 'EADDRINUSE') {
        reject(new SkillOptError(`simulated model server: port ${requestedPort} on ${host} is already in use (choose another with --port)`, { cause: err }));
      } else {
        reject(new SkillOptError(`simulated model server: cannot listen on ${where}: ${err.message}`, { cause: err }));
      }
    };
    server.once('error', onError);
    server.listen(requestedPort, host, () => {
      server.off('error', onError);
      resolve();
    });
  });

  const port = (server.address() as AddressInfo).port;
  const url = formatUrl(host, port);
  // the knobs that differ from the default world
  const changed = (Object.keys(DEFAULT_SIM_KNOBS) as (keyof SimKnobs)[]).filter((k) => k !== 'seed' && cfg[k] !== DEFAULT_SIM_KNOBS[k]);
  const knobs = [
    `model ${cfg.models.length > 0 ? cfg.models.join(', ') : 'any'}`,
    `seed ${cfg.seed}`,
    ...changed.map((k) => `${k} ${cfg[k]}`),
    ...(latencyMs > 0 ? [`latency ${latencyMs} ms`] : []),
  ];
  const banner = `[simulated] skillopt simulated model server listening on ${url} (${knobs.join(', ')})`;
  log?.(banner);

  let closed: Promise<void> | null = null;
  return {
    url,
    host,
    port,
    banner,
    stats: snapshot,
    resetStats() {
      stats = { requests: 0, byStage: {}, byModel: {} };
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        for (const p of pending) {
          clearTimeout(p.timer);
          p.res.destroy();
        }
        pending.clear();
        server.close(() => {
          log?.('[simulated] skillopt simulated model server stopped');
          resolve();
        });
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
