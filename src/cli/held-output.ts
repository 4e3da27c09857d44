/**
 * Vitest's console output of a `skillopt test` run, held back until a suite file has loaded. A run whose
 * suites cannot load (a dataset, seed skill or scorer option that is wrong: the user's input) then ends
 * with the one line that says why, as `eval` and `--optimize` do, instead of Vitest's banner, FAIL block
 * and code frame around it. Any other run shows everything Vitest wrote, in order, once a suite loads
 * (or at the end).
 *
 * The streams stand in for stdout and stderr as Vitest's logger sees them: they report the terminal's
 * `isTTY`, size and colours, and write through the process streams' own `write` as it was when they were
 * made (Vitest's live summary in a terminal intercepts `process.stdout.write`, and writes through its
 * logger's stream itself).
 */
import { Writable } from 'node:stream';
import { currentIo, type OutputStream } from '../util/io-context.ts';

/** The process's stream, or a caller's for a command run in process (util/io-context.ts). */
type Target = OutputStream &
  Partial<Pick<NodeJS.WriteStream, 'isTTY' | 'rows' | 'getColorDepth' | 'hasColors' | 'getWindowSize'>>;

export class HeldOutput {
  readonly stdout: Writable;
  readonly stderr: Writable;
  private held: Array<() => void> | null = [];

  constructor(out: Target = currentIo().stdout, err: Target = currentIo().stderr) {
    this.stdout = this.stand(out);
    this.stderr = this.stand(err);
  }

  /** Whether the output was let through (or dropped): nothing is held any more. */
  get released(): boolean {
    return this.held === null;
  }

  /** Write what was held, in order, and let everything after it through. */
  release(): void {
    const held = this.held;
    this.held = null;
    for (const write of held ?? []) write();
  }

  /** Drop what was held (the run ends with its one-line error instead) and let everything after it through. */
  discard(): void {
    this.held = null;
  }

  private stand(target: Target): Writable {
    const write = target.write.bind(target) as (chunk: string | Uint8Array) => boolean;
    const stream = new Writable({
      decodeStrings: false,
      write: (chunk: Buffer | string, _encoding, done) => {
        if (this.held) this.held.push(() => write(chunk));
        else write(chunk);
        done();
      },
    });
    Object.defineProperties(stream, {
      isTTY: { get: () => target.isTTY },
      columns: { get: () => target.columns },
      rows: { get: () => target.rows },
    });
    const tty = stream as unknown as Partial<NodeJS.WriteStream>;
    if (typeof target.getColorDepth === 'function') tty.getColorDepth = target.getColorDepth.bind(target);
    if (typeof target.hasColors === 'function')
      tty.hasColors = target.hasColors.bind(target) as NodeJS.WriteStream['hasColors'];
    if (typeof target.getWindowSize === 'function') tty.getWindowSize = target.getWindowSize.bind(target);
    return stream;
  }
}
