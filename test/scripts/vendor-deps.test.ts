import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, test } from 'vitest';

// `npm test` builds first; the build's last step (scripts/vendor-deps.mjs) bundles zod and yaml into dist/vendor.
const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'vendor' ? [] : jsFiles(path);
    return e.name.endsWith('.js') ? [path] : [];
  });
}

describe('vendored zod and yaml (start-up: one module each instead of about 120)', () => {
  test('no compiled module imports the zod or yaml packages; they import the bundles', () => {
    const files = jsFiles(DIST);
    const direct = files.filter((f) => /(\bfrom\s*|\bimport\s*\(\s*)['"](zod|yaml)['"]/.test(readFileSync(f, 'utf8')));
    expect(direct.map((f) => f.slice(DIST.length))).toEqual([]);
    const vendored = files.filter((f) => /['"](\.\.?\/)+(vendor\/)(zod|yaml)\.js['"]/.test(readFileSync(f, 'utf8')));
    expect(vendored.length).toBeGreaterThanOrEqual(5);
  });

  test('the bundles export what the sources import, and behave as the packages', async () => {
    const zod = (await import(pathToFileURL(join(DIST, 'vendor', 'zod.js')).href)) as typeof import('zod');
    const yaml = (await import(pathToFileURL(join(DIST, 'vendor', 'yaml.js')).href)) as typeof import('yaml');
    const schema = zod.z.strictObject({ a: zod.z.number().default(1) });
    expect(schema.parse({})).toEqual({ a: 1 });
    expect(schema.safeParse({ b: 2 }).success).toBe(false);
    expect(zod.z.toJSONSchema(zod.z.object({ s: zod.z.string() }))).toMatchObject({ type: 'object', required: ['s'] });
    expect(yaml.parse('a: 1\nb: [x, y]\n')).toEqual({ a: 1, b: ['x', 'y'] });
    expect(yaml.parseDocument('a: 1 # note\n').toJS()).toEqual({ a: 1 });
    expect(yaml.stringify({ a: 1 })).toBe('a: 1\n');
  });
});
