/**
 * What a cached reply is keyed by: everything that determines it, nothing that does not.
 *
 * - The endpoint's identity. A real endpoint (or a standalone `skillopt sim-server`) is its backend, model
 *   name and base URL without credentials (Azure: its endpoint and API version). The in-process simulated
 *   model is "simulated", its model name and the knobs that change its replies (every `model.simulated.*`
 *   key — seed, noise, max_rules, analyst_error_rate, … — but `latency_ms`, which only delays them), not its
 *   port, a fresh one each run. A knob added to the simulated model later is part of the identity at once.
 *   So simulated and real replies never mix, and a run at another noise level or seed reuses nothing.
 * - The request as sent: the full messages (a tool loop's whole history: every assistant turn and tool
 *   result), the tools offered, the token cap, the temperature, a `response_format` given by the caller, the
 *   `seed` (a trial's sample index when env.trials > 1, the same on every turn of a trial).
 * - For a structured call, the logical request: the schema's name and JSON schema and the role's
 *   `structured_output` policy, not the response_format each request of the negotiation carried. A rerun
 *   then makes no request at all, even where the endpoint needed a fallback (JSON schema → JSON mode →
 *   text) or a re-ask the first time.
 *
 * The key is the SHA-256 of that material as JSON (the material itself is never stored).
 */
import { createHash } from 'node:crypto';
import type { RoleConfig } from '../types.ts';

/** Bumped when the material or the stored value changes shape: old entries then simply miss. */
export const KEY_VERSION = 1;

/** The simulated model's knobs that change its replies: config `model.simulated.*` without the latency. */
export type SimKnobs = Readonly<Record<string, number | string | boolean | null>>;

/** Keys that only delay the simulated model's replies. */
const DELAY_KEYS = new Set(['latency_ms', 'latency_scale']);

/** `model.simulated` as an identity: every knob but the latency, in a fixed order. */
export function simKnobs(simulated: Readonly<Record<string, unknown>>): SimKnobs {
  const out: Record<string, number | string | boolean | null> = {};
  for (const k of Object.keys(simulated).sort()) {
    const v = simulated[k];
    if (DELAY_KEYS.has(k) || v === undefined || (typeof v === 'object' && v !== null)) continue;
    out[k] = v as number | string | boolean | null;
  }
  return out;
}

/**
 * The knobs of one simulated model id: `model.simulated`'s, and those `model.simulated.profiles.<id>` sets
 * for it (as `profiles.<id>.<knob>`). A model id's built-in profile is implied by the id itself.
 */
export function simKnobsOf(simulated: Readonly<Record<string, unknown>>, model: string): SimKnobs {
  const shared = simKnobs(simulated);
  const profiles = simulated.profiles;
  const own =
    profiles && typeof profiles === 'object' && Object.hasOwn(profiles, model)
      ? (profiles as Record<string, unknown>)[model]
      : undefined;
  if (!own || typeof own !== 'object') return shared;
  const mine = simKnobs(own as Record<string, unknown>);
  return { ...shared, ...Object.fromEntries(Object.entries(mine).map(([k, v]) => [`profiles.${model}.${k}`, v])) };
}

/** `mcp`: a recorded MCP request and its response (docs/cache.md#mcp-servers), keyed by mcpKey. */
export type EntryKind = 'chat' | 'structured' | 'mcp';

/** `scheme://user:pass@host/…` → `scheme://host/…`; no trailing slash; the query string dropped (keys travel there). */
export function urlIdentity(url: string): string {
  return url
    .trim()
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/i, '$1')
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '');
}

/** The endpoint identity of a role, as a plain object (see the module comment). */
export function endpointIdentity(role: RoleConfig, sim: SimKnobs | null): Record<string, unknown> {
  if (role.backend === 'simulated') return { simulated: true, model: role.model, knobs: sim ?? {} };
  return {
    backend: role.backend,
    model: role.model,
    url: urlIdentity(role.azure ? role.azure.endpoint : role.baseURL),
    ...(role.azure ? { api_version: role.azure.apiVersion } : {}),
  };
}

/** A short, credential-free label of an endpoint for logs and errors: `simulated mitko (seed 0, noise 0)`. */
export function endpointLabel(role: RoleConfig, sim: SimKnobs | null): string {
  if (role.backend === 'simulated') {
    const k = sim ?? {};
    // seed and noise first (what a person changes), then the rest in name order
    const keys = [
      ...['seed', 'noise'].filter((n) => n in k),
      ...Object.keys(k).filter((n) => n !== 'seed' && n !== 'noise'),
    ];
    return `simulated ${role.model}${keys.length ? ` (${keys.map((n) => `${n} ${String(k[n])}`).join(', ')})` : ''}`;
  }
  return `${role.model} at ${urlIdentity(role.azure ? role.azure.endpoint : role.baseURL)}`;
}

/**
 * The key of a recorded MCP request: the material (src/mcp/record.ts: the suite, the server, the request and
 * what it depends on) under the identity `{"mcp":true}`, so it can never equal a model call's key.
 */
export function mcpKey(material: unknown): string {
  return cacheKey('{"mcp":true}', 'mcp', material);
}

/** The key: SHA-256 (hex) of `[version, endpoint, kind, request]` as JSON. `endpoint` is endpointIdentity's JSON. */
export function cacheKey(endpoint: string, kind: EntryKind, request: unknown): string {
  return createHash('sha256')
    .update(`[${KEY_VERSION},${endpoint},"${kind}",${JSON.stringify(request)}]`)
    .digest('hex');
}
