/**
 * Error classification and backoff. Pure functions (no I/O, no clock unless passed in).
 *
 * Retryable: 408, 409, 429, 5xx, timeouts, connection failures/resets, truncated or non-JSON bodies,
 * replies without choices/message. Not retryable: other 4xx (400, 401, 403, 404, 422, …) and user aborts.
 */
import { STATUS_CODES } from 'node:http';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { InfraErrorKind } from './errors.ts';
import { oneLineClip } from '../util/clip.ts';

/** A 2xx response we cannot use (no choices, no message, not a completion object). Retryable. */
export class BadResponseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadResponseError';
  }
}

export interface ErrorClass {
  kind: InfraErrorKind;
  retryable: boolean;
  status?: number;
  /** One short line for messages, e.g. "HTTP 503 Service Unavailable: overloaded". */
  detail: string;
  /** Delay the server asked for (Retry-After / retry-after-ms), in ms. */
  retryAfterMs?: number;
}

export interface ClassifyContext {
  /** The caller's AbortSignal fired (user abort): never retried. */
  userAborted?: boolean;
  /** Our per-attempt timer fired. */
  timedOut?: boolean;
  timeoutMs?: number;
  /** Clock for HTTP-date Retry-After values. */
  now?: number;
}

/** Kind of an HTTP error status. */
export function kindForStatus(status: number): InfraErrorKind {
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status === 408) return 'timeout';
  if (status === 429) return 'rate_limit';
  if (status === 409 || status >= 500) return 'server';
  return 'bad_request';
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export function describeStatus(status: number): string {
  const text = STATUS_CODES[status];
  return text ? `HTTP ${status} ${text}` : `HTTP ${status}`;
}

function errorBodyMessage(err: APIError): string | undefined {
  const body = err.error as unknown;
  if (body && typeof body === 'object') {
    const m = (body as { message?: unknown }).message;
    if (typeof m === 'string' && m.trim()) return m;
    const inner = (body as { error?: unknown }).error;
    if (typeof inner === 'string' && inner.trim()) return inner;
    if (inner && typeof inner === 'object') {
      const im = (inner as { message?: unknown }).message;
      if (typeof im === 'string' && im.trim()) return im;
    }
  } else if (typeof body === 'string' && body.trim()) {
    return body;
  }
  return undefined;
}

function causeCode(err: unknown): string | undefined {
  let cur: unknown = err;
  for (let i = 0; i < 5 && cur && typeof cur === 'object'; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && code) return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

function causeMessage(err: unknown): string | undefined {
  let cur: unknown = err;
  let last: string | undefined;
  for (let i = 0; i < 5 && cur && typeof cur === 'object'; i++) {
    const m = (cur as { message?: unknown }).message;
    if (typeof m === 'string' && m) last = m;
    cur = (cur as { cause?: unknown }).cause;
  }
  return last;
}

function isAbortLike(err: unknown): boolean {
  return (
    !!err &&
    typeof err === 'object' &&
    ((err as { name?: unknown }).name === 'AbortError' || err instanceof APIUserAbortError)
  );
}

/** Classify anything thrown while making one request with the openai SDK. */
export function classifyError(err: unknown, ctx: ClassifyContext = {}): ErrorClass {
  if (ctx.userAborted) return { kind: 'aborted', retryable: false, detail: 'aborted by the caller' };
  if (ctx.timedOut || err instanceof APIConnectionTimeoutError) {
    const detail = ctx.timeoutMs !== undefined ? `timed out after ${ctx.timeoutMs} ms` : 'request timed out';
    return { kind: 'timeout', retryable: true, detail };
  }
  if (err instanceof BadResponseError) return { kind: 'bad_response', retryable: true, detail: err.message };
  if (err instanceof APIUserAbortError || isAbortLike(err)) {
    return { kind: 'aborted', retryable: false, detail: 'request aborted' };
  }
  if (err instanceof APIConnectionError && (err.cause as Error | undefined)?.name === 'TruncatedResponseError') {
    return { kind: 'connection', retryable: true, detail: 'connection closed while reading the response body' };
  }
  if (err instanceof APIConnectionError) {
    const code = causeCode(err.cause ?? err);
    const msg = causeMessage(err.cause);
    const detail = `connection failed${code ? ` (${code})` : msg ? ` (${oneLineClip(msg, 120)})` : ''}`;
    return { kind: 'connection', retryable: true, detail };
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    const kind = kindForStatus(status);
    const bodyMsg = errorBodyMessage(err);
    const detail = describeStatus(status) + (bodyMsg ? `: ${oneLineClip(bodyMsg, 200)}` : '');
    const out: ErrorClass = { kind, retryable: isRetryableStatus(status), status, detail };
    const ra = parseRetryAfter(err.headers, ctx.now);
    if (ra !== undefined) out.retryAfterMs = ra;
    return out;
  }
  if (err instanceof SyntaxError) {
    return { kind: 'bad_response', retryable: true, detail: 'response body is not valid JSON' };
  }
  // undici: body stream cut short (Content-Length not reached, socket closed mid-body).
  if (err instanceof TypeError && /terminated|other side closed|premature close/i.test(String(causeMessage(err)))) {
    return { kind: 'connection', retryable: true, detail: 'connection closed while reading the response body' };
  }
  const code = causeCode(err);
  if (code && /^(E[A-Z]+|UND_ERR_\w+)$/.test(code)) {
    return { kind: 'connection', retryable: true, detail: `connection failed (${code})` };
  }
  const msg = err instanceof Error ? err.message : String(err);
  return { kind: 'bad_response', retryable: true, detail: `unusable response: ${oneLineClip(msg, 160)}` };
}

type HeaderSource = Headers | Record<string, string | string[] | undefined> | undefined | null;

function header(headers: HeaderSource, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const rec = headers as Record<string, string | string[] | undefined>;
  for (const [k, v] of Object.entries(rec)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

/**
 * The delay a server asks for: `retry-after-ms` (milliseconds) wins over `Retry-After`
 * (delta-seconds, possibly fractional, or an HTTP date). Undefined when absent or unparseable.
 */
export function parseRetryAfter(headers: HeaderSource, now: number = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.max(0, Math.ceil(Number(ms)));
  const ra = header(headers, 'retry-after')?.trim();
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Math.max(0, Math.ceil(Number(ra) * 1000));
  const when = Date.parse(ra);
  if (Number.isNaN(when)) return undefined;
  return Math.max(0, when - now);
}

export const MAX_RETRY_AFTER_MS = 120_000;

export interface BackoffOptions {
  /** 0 for the delay before the first retry. */
  attempt: number;
  baseMs: number;
  maxMs: number;
  /** Uniform in [0, 1). */
  random?: () => number;
  /** Server-requested delay; overrides the computed one (no jitter), capped at `maxRetryAfterMs`. */
  retryAfterMs?: number;
  maxRetryAfterMs?: number;
}

/**
 * Exponential backoff with full jitter: uniform in [0, min(maxMs, baseMs * 2^attempt)].
 * A server-requested delay replaces it: we wait exactly that long (capped at `maxRetryAfterMs`, 120 s).
 */
export function backoffDelay(o: BackoffOptions): number {
  if (o.retryAfterMs !== undefined && Number.isFinite(o.retryAfterMs)) {
    return Math.min(Math.max(0, Math.ceil(o.retryAfterMs)), o.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS);
  }
  const base = Math.max(0, o.baseMs);
  const cap = Math.max(0, o.maxMs);
  const exp = Math.min(cap, base * 2 ** Math.max(0, o.attempt));
  const r = (o.random ?? Math.random)();
  const u = Number.isFinite(r) ? Math.min(1, Math.max(0, r)) : 1;
  return Math.round(u * exp);
}
