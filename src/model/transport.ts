/**
 * How one request of a role reaches its endpoint: a slot of the role's limiter, then attempts with a
 * per-attempt timeout, retried with backoff + jitter (Retry-After honoured) while the failure is
 * retryable, each attempt and the outcome recorded in the accounting under the call's stage.
 */
import { setMaxListeners } from 'node:events';
import type { ChatMessage } from '../types.ts';
import type { Accounting } from './accounting.ts';
import type { ChatResult, ModelClientOptions } from './client-types.ts';
import { ModelInfraError, endpointOf, requestContext } from './errors.ts';
import { Limiter } from './limiter.ts';
import { buildBody, readCompletion, type RequestOptions } from './request.ts';
import { backoffDelay, classifyError } from './retry.ts';
import { roleSdk, safeCause, scrubKey } from './sdk.ts';
import { anySignal, defaultSleep } from './signals.ts';
import type { RoleConfig } from './types.ts';
import { currentEnv } from '../util/io-context.ts';

export interface Transport {
  /** One chat request, retried until it succeeds or fails for good (a `ModelInfraError`). */
  send(messages: ChatMessage[], o: RequestOptions): Promise<ChatResult>;
  /** Throws `aborted` when the client is closed or the caller has already aborted. */
  refuseClosed(stage: string, signal: AbortSignal | undefined): void;
  /** Aborts requests in flight and refuses new ones. */
  close(): void;
}

/** The recording calls of two accountings at once (a client's, and a caller's tap on one call). */
function teeAccounting(
  a: Accounting,
  b: Accounting,
): Pick<Accounting, 'recordAttempt' | 'recordSuccess' | 'recordError'> {
  return {
    recordAttempt: (stage, retry) => (a.recordAttempt(stage, retry), b.recordAttempt(stage, retry)),
    recordSuccess: (stage, usage, ms) => (a.recordSuccess(stage, usage, ms), b.recordSuccess(stage, usage, ms)),
    recordError: (stage, ms) => (a.recordError(stage, ms), b.recordError(stage, ms)),
  };
}

export function createTransport(role: RoleConfig, opts: ModelClientOptions): Transport {
  const sleep = opts.sleep ?? defaultSleep;
  const random = opts.random ?? Math.random;
  const log = opts.log ?? (() => {});
  const limiter = opts.limiter ?? new Limiter(Math.max(1, role.concurrency));
  const url = endpointOf(role);
  const timeoutMs = Math.max(1, Math.ceil(role.timeoutMs));
  const retries = Math.max(0, Math.floor(role.retries));
  const sdk = roleSdk(role, opts.env ?? currentEnv(), timeoutMs);
  const closeCtl = new AbortController();
  // Every call in flight or waiting for a slot listens to it: many listeners are expected.
  setMaxListeners(0, closeCtl.signal);

  const abortedError = (stage: string, attempts: number, detail: string, cause?: unknown): ModelInfraError =>
    new ModelInfraError({ ...requestContext(role, stage), kind: 'aborted', attempts, detail, cause });

  function refuseClosed(stage: string, signal: AbortSignal | undefined): void {
    if (closeCtl.signal.aborted) throw abortedError(stage, 0, 'the model client is closed');
    if (signal?.aborted) throw abortedError(stage, 0, 'aborted by the caller');
  }

  async function send(messages: ChatMessage[], o: RequestOptions): Promise<ChatResult> {
    const stage = o.stage;
    const userSignal = o.signal;
    refuseClosed(stage, userSignal);
    // Fast path: a free slot needs no abortable wait (and no extra AbortController per call).
    let release = limiter.tryAcquire();
    if (!release) {
      const waitSignal = anySignal([userSignal, closeCtl.signal]);
      try {
        release = await limiter.acquire(waitSignal.signal);
      } catch (e) {
        throw abortedError(
          stage,
          0,
          closeCtl.signal.aborted ? 'the model client is closed' : 'aborted by the caller',
          e,
        );
      } finally {
        waitSignal.dispose();
      }
    }
    try {
      return await retryLoop(messages, o);
    } finally {
      release();
    }
  }

  async function retryLoop(messages: ChatMessage[], o: RequestOptions): Promise<ChatResult> {
    const stage = o.stage;
    const accounting = o.tap ? teeAccounting(opts.accounting, o.tap) : opts.accounting;
    const userSignal = o.signal;
    const started = performance.now();
    const body = buildBody(role, messages, o);
    let attempts = 0;
    for (let attempt = 0; ; attempt++) {
      attempts++;
      accounting.recordAttempt(stage, attempt > 0);
      const key = sdk.apiKey();
      // One controller per attempt, fed by the caller's signal, the client's close and the timeout.
      const attemptCtl = new AbortController();
      let timedOut = false;
      const outer = anySignal([userSignal, closeCtl.signal], attemptCtl);
      const timer = setTimeout(() => {
        timedOut = true;
        attemptCtl.abort(new Error(`timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      let failure: unknown;
      try {
        const completion: unknown = await sdk.client(key).chat.completions.create(body, {
          signal: attemptCtl.signal,
          timeout: timeoutMs,
          maxRetries: 0,
        });
        const r = readCompletion(role, completion);
        const latencyMs = Math.round(performance.now() - started);
        accounting.recordSuccess(stage, r.usage, latencyMs);
        return { ...r, attempts, latencyMs };
      } catch (err) {
        failure = err;
      } finally {
        clearTimeout(timer);
        outer.dispose();
      }

      const closed = closeCtl.signal.aborted;
      const userAborted = !!userSignal?.aborted || closed;
      const cls = classifyError(failure, { userAborted, timedOut: timedOut && !userAborted, timeoutMs });
      const detail = scrubKey(closed && !userSignal?.aborted ? 'the model client was closed' : cls.detail, key);
      if (!cls.retryable || attempt >= retries) {
        accounting.recordError(stage, Math.round(performance.now() - started));
        throw new ModelInfraError({
          ...requestContext(role, stage),
          kind: cls.kind,
          ...(cls.status !== undefined ? { status: cls.status } : {}),
          attempts,
          detail,
          cause: safeCause(failure, key),
        });
      }
      const delay = backoffDelay({
        attempt,
        baseMs: role.retryBaseDelayMs,
        maxMs: role.retryMaxDelayMs,
        random,
        ...(cls.retryAfterMs !== undefined ? { retryAfterMs: cls.retryAfterMs } : {}),
      });
      log(
        `${role.role} ${stage}: ${detail} from ${url} (model ${role.model}); ` +
          `retry ${attempt + 1}/${retries} in ${delay} ms${cls.retryAfterMs !== undefined ? ' (server-requested)' : ''}`,
      );
      const sleepSignal = anySignal([userSignal, closeCtl.signal]);
      try {
        await sleep(delay, sleepSignal.signal);
      } catch (e) {
        if (sleepSignal.signal.aborted) {
          accounting.recordError(stage, Math.round(performance.now() - started));
          throw abortedError(
            stage,
            attempts,
            closeCtl.signal.aborted && !userSignal?.aborted ? 'the model client was closed' : 'aborted by the caller',
            e,
          );
        }
        throw e;
      } finally {
        sleepSignal.dispose();
      }
      if (userSignal?.aborted || closeCtl.signal.aborted) {
        accounting.recordError(stage, Math.round(performance.now() - started));
        throw abortedError(
          stage,
          attempts,
          userSignal?.aborted ? 'aborted by the caller' : 'the model client was closed',
        );
      }
    }
  }

  return {
    send,
    refuseClosed,
    close: () => {
      if (!closeCtl.signal.aborted) closeCtl.abort(new Error('model client closed'));
    },
  };
}
