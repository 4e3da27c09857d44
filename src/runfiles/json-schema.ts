/**
 * The JSON Schema files of docs/schemas/ (one per run file), rendered from the zod schemas so tools in
 * other languages can read a run folder. scripts/gen-schemas.mjs writes them; a test checks they are current.
 */
import { z } from 'zod';
import { RUN_FILE_SCHEMAS } from './index.ts';

/** `<name>.schema.json` → its text (2-space JSON with a final newline), in a stable order. */
export function renderJsonSchemas(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, schema] of Object.entries(RUN_FILE_SCHEMAS)) {
    const json = { title: `skillopt ${name}`, ...z.toJSONSchema(schema, { io: 'input' }) };
    out[`${name}.schema.json`] = `${JSON.stringify(json, null, 2)}\n`;
  }
  return out;
}
