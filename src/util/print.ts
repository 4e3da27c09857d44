/**
 * The CLI's one way to print a line: redacted (util/redact.ts), then with every control character shown as
 * `\x1b` but newline, tab and our own colours (util/control-chars.ts terminalText). Model text is escaped
 * where a view puts it in as well; this is where nothing from outside can reach the terminal raw.
 * Lines go to the current command's streams (util/io-context.ts): the process's, or a test's in process.
 */
import { terminalText } from './control-chars.ts';
import { currentIo } from './io-context.ts';
import { redactText } from './redact.ts';

/** `text` as the terminal gets it. */
export const printable = (text: string): string => terminalText(redactText(text));

/** Print `text` and a newline to stdout. */
export function printOut(text: string): void {
  currentIo().stdout.write(`${printable(text)}\n`);
}

/** Print `text` and a newline to stderr. */
export function printErr(text: string): void {
  currentIo().stderr.write(`${printable(text)}\n`);
}

/** Write `text` as it is (no newline added) to stdout. */
export function writeOut(text: string): void {
  currentIo().stdout.write(printable(text));
}

/** The width of the terminal stdout is, if it is one. */
export function outputColumns(): number | undefined {
  return currentIo().stdout.columns;
}
