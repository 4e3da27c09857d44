/**
 * Text from outside (a model's answer, a scorer's feedback quoting it, an endpoint's error body) made safe to
 * print: C0 control characters, DEL and the C1 controls (ESC, BEL, CSI U+009B, …) become visible escapes
 * such as `\x1b`, so a reply cannot move the cursor, retitle or clear the terminal, or smuggle a line into a
 * markdown step summary or a workflow command. Called where such text is printed, before any colour of our
 * own is added (which would be escaped too).
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
