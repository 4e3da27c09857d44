/**
 * What the model client and the simulated server agree on, without either importing the other (the
 * client loads the openai SDK; the simulated server must not).
 */

/** Stamped into every simulated completion's `system_fingerprint`; the client reads it to flag a run simulated. */
export const SIMULATED_FINGERPRINT = 'skillopt-simulated';

/** A chat message's text: a string as-is, or the `text` parts of a content array joined. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p: unknown) =>
        p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
          ? (p as { text: string }).text
          : '',
      )
      .join('');
  }
  return '';
}
