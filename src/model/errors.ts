/**
 * Typed errors of the model layer.
 *
 * - `ModelInfraError`: the endpoint could not give us an answer (down, auth, timeout after retries, 5xx/429
 *   after retries, user abort, malformed HTTP responses). Never to be scored as a wrong answer.
 * - `ModelOutputError`: the model answered, but its reply stayed unusable (no JSON / schema mismatch)
 *   after the one re-ask.
 *
 * Messages are one readable line naming the request. They never contain an API key or the credentials of
 * a URL: messages, `url` and `detail` pass util/redact.ts's `redactText`, so an error that travels into a
 * case record (`error`, `feedback`) or across the model gateway is already clean.
 */
import { oneLineClip } from '../util/clip.ts';
import { SkillOptError } from '../util/errors.ts';
import { maskUrlCredentials, redactText } from '../util/redact.ts';
import type { RoleConfig } from './types.ts';

export type InfraErrorKind =
  | 'timeout'
  | 'connection'
  | 'rate_limit'
  | 'server'
  | 'auth'
  | 'not_found'
  | 'bad_request'
  | 'aborted'
  | 'bad_response';

export const INFRA_ERROR_KINDS: readonly InfraErrorKind[] = [
  'timeout',
  'connection',
  'rate_limit',
  'server',
  'auth',
  'not_found',
  'bad_request',
  'aborted',
  'bad_response',
];

/** Which request failed: enough to name it in one line. */
export interface RequestContext {
  role: string;
  model: string;
  url: string;
  stage: string;
}

/** The URL a role's requests go to (Azure's endpoint, else the base URL), for messages: credentials masked. */
export function endpointOf(role: RoleConfig): string {
  return maskUrlCredentials(role.azure ? role.azure.endpoint : role.baseURL);
}

export function requestContext(role: RoleConfig, stage: string): RequestContext {
  return { role: role.role, model: role.model, url: endpointOf(role), stage };
}

export interface ModelInfraErrorInit extends RequestContext {
  kind: InfraErrorKind;
  status?: number;
  attempts: number;
  /** Short description of the last failure, e.g. "HTTP 503 Service Unavailable" or "timed out after 30000 ms". */
  detail: string;
  cause?: unknown;
}

export class ModelInfraError extends SkillOptError {
  readonly kind: InfraErrorKind;
  readonly status?: number;
  readonly attempts: number;
  readonly role: string;
  readonly model: string;
  readonly url: string;
  readonly stage: string;
  readonly detail: string;

  constructor(init: ModelInfraErrorInit) {
    const url = redactText(init.url);
    const detail = redactText(init.detail);
    const what = init.attempts === 1 ? '1 attempt' : `${init.attempts} attempts`;
    const verb = init.kind === 'aborted' ? 'was aborted' : 'failed';
    const message =
      `${init.role} request to ${url} (model ${init.model}, stage ${init.stage}) ${verb} ` + `after ${what}: ${detail}`;
    super(oneLineClip(message, 600), init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    if (init.status !== undefined) this.status = init.status;
    this.attempts = init.attempts;
    this.role = init.role;
    this.model = init.model;
    this.url = url;
    this.stage = init.stage;
    this.detail = detail;
  }

  /** Plain JSON (for workers reporting errors to the main process); no cause, no secrets. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      kind: this.kind,
      ...(this.status !== undefined ? { status: this.status } : {}),
      attempts: this.attempts,
      role: this.role,
      model: this.model,
      url: this.url,
      stage: this.stage,
      detail: this.detail,
    };
  }
}

export interface ModelOutputErrorInit {
  stage: string;
  /** Zod issue summary, or "no JSON object found" etc. */
  reason: string;
  /** The raw reply (clipped to a short excerpt in the error). */
  raw: string;
  role?: string;
  model?: string;
  url?: string;
  attempts?: number;
}

export class ModelOutputError extends SkillOptError {
  readonly stage: string;
  readonly reason: string;
  /** The first ~200 characters of the last reply, on one line. */
  readonly excerpt: string;
  readonly role?: string;
  readonly model?: string;
  readonly url?: string;
  readonly attempts?: number;

  constructor(init: ModelOutputErrorInit) {
    const excerpt = redactText(oneLineClip(init.raw, 200));
    const url = init.url === undefined ? undefined : redactText(init.url);
    const who =
      init.role !== undefined
        ? `${init.role} reply from ${url ?? '?'} (model ${init.model ?? '?'}, stage ${init.stage})`
        : `model reply for stage ${init.stage}`;
    super(
      redactText(
        oneLineClip(
          `${who} stayed invalid after a re-ask: ${init.reason}; reply began: ${JSON.stringify(excerpt)}`,
          800,
        ),
      ),
    );
    this.stage = init.stage;
    this.reason = redactText(init.reason);
    this.excerpt = excerpt;
    if (init.role !== undefined) this.role = init.role;
    if (init.model !== undefined) this.model = init.model;
    if (url !== undefined) this.url = url;
    if (init.attempts !== undefined) this.attempts = init.attempts;
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, message: this.message, stage: this.stage, reason: this.reason, excerpt: this.excerpt };
  }
}

export function isInfraError(e: unknown): e is ModelInfraError {
  return e instanceof ModelInfraError;
}

export function isOutputError(e: unknown): e is ModelOutputError {
  return e instanceof ModelOutputError;
}
