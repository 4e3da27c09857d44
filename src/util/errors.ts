/**
 * A user-facing failure: its message is one readable line naming the file, key or request at fault.
 * The CLI prints it without a stack trace (set SKILLOPT_DEBUG=1 to see one).
 */
export class SkillOptError extends Error {
  /** Process exit code the CLI uses for this error. */
  readonly exitCode: number;
  constructor(message: string, options?: { cause?: unknown; exitCode?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.exitCode = options?.exitCode ?? 2;
  }
}

/** First line of any error's message, for one-line reports. */
export function oneLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return (msg.split('\n').find((l) => l.trim().length > 0) ?? msg).trim();
}
