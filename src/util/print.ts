/**
 * The CLI's one way to print a line: redacted (util/redact.ts), then with every control character shown as
 * `\x1b` but newline, tab and our own colours (util/control-chars.ts terminalText). Model text is escaped
 * where a view puts it in as well; this is where nothing from outside can reach the terminal raw.
 */
import { terminalText } from './control-chars.ts';
import { redactText } from './redact.ts';

/** `text` as the terminal gets it. */
export const printable = (text: string): string => terminalText(redactText(text));

/** Print `text` and a newline to stdout. */
export function printOut(text: string): void {
  console.log(printable(text));
}

/** Print `text` and a newline to stderr. */
export function printErr(text: string): void {
  console.error(printable(text));
}
