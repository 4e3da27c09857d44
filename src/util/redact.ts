/**
 * The one redaction function for free text: everything skillopt writes or prints passes `redactText`
 * at the boundary — util/atomic.ts (every file a run writes), the CLI's output (util/print.ts: end report,
 * the fatal error line, `[skillopt]` log lines, the reporter's table, `skillopt config`) — and the model layer's
 * error messages use it too, so an endpoint error that travels into a case record is already clean.
 *
 * It masks
 * - the userinfo of every URL: `scheme://user:pass@host` → `scheme://***@host`;
 * - every secret value this process registered (`registerSecret`: role resolution registers the API keys
 *   it read from the environment and the passwords of its endpoint URLs) → `***`.
 *
 * It also says which config key names hold secrets (`isSecretKey`) and how such a value is shortened
 * (`redactValue`), for config/redact.ts's structured pass and the command line a lock records.
 *
 * The registry lives in this module's memory only; nothing about a secret is ever written anywhere.
 * Values shorter than MIN_SECRET_LENGTH are not registered (masking every "abc" in a report would be
 * noise); such credentials are still masked where they appear inside a URL.
 *
 * Cost: one `includes('://')` and one `includes` per registered secret when there is nothing to mask.
 * The URL pattern is linear: it starts only at a literal `://` (whatever the scheme before it, valid or
 * not: masking too much is harmless, missing a credential is not), and its userinfo scan stops at the
 * first `/ ? # " \ < >`, backtick or whitespace — so it never runs into the next `://`.
 */

const SECRET_SUFFIXES = ['apikey', 'token', 'secret', 'password'];

/**
 * A key is secret when its name (case-insensitive, `-`/`_` ignored) ends with `api_key`, `token`,
 * `secret` or `password`: `azure_openai_api_key`, `access_token`, `client_secret`. Counts such as
 * `max_tokens` end in "tokens" and are not secrets; keys ending in `_env` (`api_key_env`) hold variable
 * NAMES and stay.
 */
export function isSecretKey(name: string): boolean {
  const n = name.toLowerCase().replace(/[-_]/g, '');
  if (n.endsWith('env')) return false;
  return SECRET_SUFFIXES.some((s) => n.endsWith(s));
}

/** A secret non-empty string becomes `abcd...wxyz` (first 4 + last 4) when it has at least 12 characters, else `***`. */
export function redactValue(value: string): string {
  return value.length >= 12 ? `${value.slice(0, 4)}...${value.slice(-4)}` : '***';
}

/** Registered secrets shorter than this are ignored. */
export const MIN_SECRET_LENGTH = 8;

/** What a secret becomes. */
export const MASK = '***';

/**
 * `://userinfo@`: userinfo runs to the LAST `@` of the authority (like the WHATWG URL parser), and never
 * crosses `/ ? #`, whitespace or a character that is not legal unescaped in a URL (`" \ < >` and the
 * backtick), so masking inside a JSON string keeps the JSON valid.
 */
const URL_USERINFO = /:\/\/[^\s/?#"\\<>`]*@/g;

const secrets = new Set<string>();
/** Longest first, so a secret that contains another is masked whole. */
let ordered: string[] = [];

/** Mask the credentials of every URL in `text` (`https://***@host`). */
export function maskUrlCredentials(text: string): string {
  return text.includes('://') ? text.replace(URL_USERINFO, `://${MASK}@`) : text;
}

/**
 * Remember a secret value so `redactText` masks it wherever it appears (also in its JSON-escaped form).
 * Empty, missing and short values are ignored.
 */
export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH || secrets.has(value)) return;
  secrets.add(value);
  const escaped = JSON.stringify(value).slice(1, -1);
  if (escaped !== value) secrets.add(escaped);
  ordered = [...secrets].sort((a, b) => b.length - a.length);
}

/** Register the password (or user, when there is no password) of a URL's userinfo, raw and percent-decoded. */
export function registerUrlSecrets(url: string | undefined | null): void {
  if (!url) return;
  const m = /:\/\/([^\s/?#"\\<>`]*)@/.exec(url);
  if (!m) return;
  const userinfo = m[1]!;
  const colon = userinfo.indexOf(':');
  const secret = colon >= 0 ? userinfo.slice(colon + 1) : userinfo;
  registerSecret(secret);
  try {
    registerSecret(decodeURIComponent(secret));
  } catch {
    // malformed percent-encoding: the raw form is registered
  }
}

/** Forget every registered secret (tests). */
export function clearSecrets(): void {
  secrets.clear();
  ordered = [];
}

/** How many secret values are registered (tests; the values themselves are never exposed). */
export function registeredSecretCount(): number {
  return secrets.size;
}

/** `text` with URL credentials and every registered secret masked. */
export function redactText(text: string): string {
  let out = maskUrlCredentials(text);
  for (const s of ordered) if (out.includes(s)) out = out.split(s).join(MASK);
  return out;
}
