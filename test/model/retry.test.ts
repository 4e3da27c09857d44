import { describe, expect, it } from 'vitest';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import {
  BadResponseError,
  MAX_RETRY_AFTER_MS,
  backoffDelay,
  classifyError,
  kindForStatus,
  parseRetryAfter,
} from '../../src/model/retry.ts';

function apiError(status: number, headers: Record<string, string> = {}, message = 'boom'): APIError {
  return APIError.generate(status, { error: { message } }, undefined, new Headers(headers));
}

describe('classifyError', () => {
  it.each([
    [429, 'rate_limit', true],
    [408, 'timeout', true],
    [409, 'server', true],
    [500, 'server', true],
    [502, 'server', true],
    [503, 'server', true],
    [400, 'bad_request', false],
    [401, 'auth', false],
    [403, 'auth', false],
    [404, 'not_found', false],
    [422, 'bad_request', false],
  ] as const)('HTTP %i → %s (retryable %s)', (status, kind, retryable) => {
    const c = classifyError(apiError(status));
    expect(c.kind).toBe(kind);
    expect(c.retryable).toBe(retryable);
    expect(c.status).toBe(status);
    expect(c.detail).toMatch(new RegExp(`^HTTP ${status} `));
    expect(c.detail).toContain('boom');
    expect(kindForStatus(status)).toBe(kind);
  });

  it('connection errors, timeouts and bad responses are retryable', () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const conn = classifyError(new APIConnectionError({ cause: reset }));
    expect(conn).toMatchObject({ kind: 'connection', retryable: true });
    expect(conn.detail).toContain('ECONNRESET');
    expect(classifyError(new APIConnectionTimeoutError())).toMatchObject({ kind: 'timeout', retryable: true });
    expect(classifyError(new BadResponseError('response has no choices'))).toMatchObject({
      kind: 'bad_response',
      retryable: true,
      detail: 'response has no choices',
    });
    expect(classifyError(new SyntaxError('Unexpected token <'))).toMatchObject({
      kind: 'bad_response',
      retryable: true,
    });
    const terminated = new TypeError('terminated', { cause: new Error('other side closed') });
    expect(classifyError(terminated)).toMatchObject({ kind: 'connection', retryable: true });
  });

  it('aborts are never retried; our own timer counts as a timeout', () => {
    expect(classifyError(new APIUserAbortError(), { userAborted: true })).toMatchObject({
      kind: 'aborted',
      retryable: false,
    });
    expect(classifyError(new APIUserAbortError())).toMatchObject({ kind: 'aborted', retryable: false });
    expect(classifyError(new DOMException('x', 'AbortError'))).toMatchObject({ kind: 'aborted', retryable: false });
    expect(classifyError(new APIUserAbortError(), { timedOut: true, timeoutMs: 50 })).toMatchObject({
      kind: 'timeout',
      retryable: true,
      detail: 'timed out after 50 ms',
    });
    // the caller's abort wins over a timer that fired at the same time
    expect(classifyError(new APIUserAbortError(), { timedOut: true, userAborted: true }).kind).toBe('aborted');
  });

  it('carries the server-requested delay', () => {
    expect(classifyError(apiError(429, { 'retry-after': '3' })).retryAfterMs).toBe(3000);
    expect(classifyError(apiError(503, { 'retry-after-ms': '250' })).retryAfterMs).toBe(250);
    expect(classifyError(apiError(500)).retryAfterMs).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it('reads seconds, fractional seconds, HTTP dates and retry-after-ms', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': '7' }), now)).toBe(7000);
    expect(parseRetryAfter(new Headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:09 GMT' }), now)).toBe(9000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 23:00:00 GMT' }), now)).toBe(0);
    expect(parseRetryAfter({ 'Retry-After-Ms': '1234', 'retry-after': '99' }, now)).toBe(1234);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers({}), now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('is exponential with full jitter, capped', () => {
    const top = () => 0.999999;
    expect(backoffDelay({ attempt: 0, baseMs: 100, maxMs: 10_000, random: top })).toBe(100);
    expect(backoffDelay({ attempt: 1, baseMs: 100, maxMs: 10_000, random: top })).toBe(200);
    expect(backoffDelay({ attempt: 3, baseMs: 100, maxMs: 10_000, random: top })).toBe(800);
    expect(backoffDelay({ attempt: 20, baseMs: 100, maxMs: 10_000, random: top })).toBe(10_000);
    expect(backoffDelay({ attempt: 3, baseMs: 100, maxMs: 10_000, random: () => 0 })).toBe(0);
    expect(backoffDelay({ attempt: 3, baseMs: 100, maxMs: 10_000, random: () => 0.5 })).toBe(400);
  });
  it('uses the server-requested delay as is, capped at 120 s', () => {
    expect(backoffDelay({ attempt: 0, baseMs: 100, maxMs: 1000, random: () => 0, retryAfterMs: 5000 })).toBe(5000);
    expect(backoffDelay({ attempt: 5, baseMs: 100, maxMs: 1000, random: () => 0.9, retryAfterMs: 0 })).toBe(0);
    expect(backoffDelay({ attempt: 0, baseMs: 100, maxMs: 1000, retryAfterMs: 3_600_000 })).toBe(MAX_RETRY_AFTER_MS);
    expect(MAX_RETRY_AFTER_MS).toBe(120_000);
  });
});
