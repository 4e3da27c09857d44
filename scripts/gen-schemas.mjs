#!/usr/bin/env node
/**
 * Write docs/schemas/*.schema.json from the run-file schemas (src/runfiles), from the compiled dist/:
 * `npm run build && node scripts/gen-schemas.mjs`. test/runfiles/json-schemas.test.ts fails when they are stale.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const { renderJsonSchemas } = await import(join(repo, 'dist', 'runfiles', 'json-schema.js'));
const dir = join(repo, 'docs', 'schemas');
mkdirSync(dir, { recursive: true });
const files = renderJsonSchemas();
for (const name of readdirSync(dir)) if (name.endsWith('.schema.json') && !(name in files)) rmSync(join(dir, name));
for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
console.log(`wrote ${Object.keys(files).length} schemas to docs/schemas/`);
