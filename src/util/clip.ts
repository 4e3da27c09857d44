/** Text cut to one line of at most so many characters, an ellipsis marking the cut. */
import { escapeControls } from './control-chars.ts';

/** Whitespace runs collapsed to single spaces, trimmed, and clipped to `max` characters (with an ellipsis). */
export function clip(text: string, max: number): string {
  let flat = text;
  if (/\s\s|[\n\r\t]/.test(flat)) flat = flat.replace(/\s+/g, ' ');
  flat = flat.trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/** `clip`, with control characters shown as `\x1b` (util/control-chars.ts): for text from outside, printed. */
export function oneLineClip(text: string, max: number): string {
  return clip(escapeControls(text.replace(/\s+/g, ' ').trim(), { layout: false }), max);
}
