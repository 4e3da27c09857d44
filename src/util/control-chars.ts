/**
 * Text from outside (a model's answer, a scorer's feedback quoting it, an endpoint's error body) made safe to
 * print: C0 control characters, DEL and the C1 controls (ESC, BEL, CSI U+009B, …) become visible escapes
 * such as `\x1b`, so a reply cannot move the cursor, retitle or clear the terminal, or smuggle a line into a
 * markdown step summary or a workflow command. Called where such text is put into what is printed, before
 * any colour of our own is added (which would be escaped too); and `terminalText` once more where the CLI
 * prints (util/print.ts), so that no text from outside reaches the terminal raw, whichever view forgot it.
 */

/** Every C0 control, DEL and C1 control. */
const ALL_CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
/** The same but newline and tab, which a layout may use. */
const CONTROLS_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const visible = (c: string): string => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

/**
 * `text` with its control characters shown as `\xHH`. Newlines and tabs keep their meaning unless
 * `layout: false` (a one-line field, where they are escaped too).
 */
export function escapeControls(text: string, opts: { layout?: boolean } = {}): string {
  return text.replace(opts.layout === false ? ALL_CONTROLS : CONTROLS_BUT_LAYOUT, visible);
}

/** An SGR sequence (`ESC [ 31 m`): the colours picocolors adds, the only escape sequence the CLI prints. */
const SGR_OR_CONTROL = /(\u001b\[[0-9;]*m)|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text about to be written to a terminal: every control character shown as `\xHH` but newline, tab and
 * SGR colour sequences. A colour cannot move the cursor, clear the screen, retitle the window or ring the
 * bell; whatever else an ESC, CSI, OSC or BEL in model text would do is shown, not done.
 */
export function terminalText(text: string): string {
  return text.replace(SGR_OR_CONTROL, (m, sgr: string | undefined) => sgr ?? visible(m));
}

/**
 * JSON text with DEL and the C1 controls written as `\u00XX` escapes (JSON.stringify leaves them raw; C0
 * controls it escapes already): the same value, printable as it is.
 */
export function printableJson(json: string): string {
  return json.replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `value` with every string in it, keys too (a tool call's arguments are the model's), escaped as
 * `escapeControls` does: newlines and tabs kept.
 */
export function escapeControlsDeep<T>(value: T): T {
  if (typeof value === 'string') return escapeControls(value) as T;
  if (Array.isArray(value)) return value.map(escapeControlsDeep) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [escapeControls(k), escapeControlsDeep(v)])) as T;
  }
  return value;
}
