/**
 * docs/schemas/ holds exactly the JSON Schemas rendered from src/runfiles (regenerate with
 * `npm run build && node scripts/gen-schemas.mjs`), and each one accepts the run files of
 * test/fixtures/runs-v1 the way the zod schema does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { renderJsonSchemas } from '../../src/runfiles/json-schema.ts';

const DOCS = join(import.meta.dirname, '..', '..', 'docs', 'schemas');

test('docs/schemas/ is current: one file per run-file schema, byte for byte', () => {
  const want = renderJsonSchemas();
  const have = readdirSync(DOCS)
    .filter((n) => n.endsWith('.schema.json'))
    .sort();
  expect(have).toEqual(Object.keys(want).sort());
  for (const [name, text] of Object.entries(want)) {
    expect(
      readFileSync(join(DOCS, name), 'utf8'),
      `${name} is stale: npm run build && node scripts/gen-schemas.mjs`,
    ).toBe(text);
  }
});

test('a schema names what readers need and lets other fields through', () => {
  const summary = JSON.parse(renderJsonSchemas()['summary.schema.json']!) as {
    required: string[];
    properties: Record<string, unknown>;
    additionalProperties: unknown;
  };
  expect(summary.required).toEqual(['suites', 'overall', 'wall_time_s', 'simulated']);
  expect(summary.properties.schema_version).toEqual({ type: 'number', const: 1 });
  expect(summary.additionalProperties).toEqual({});
});
