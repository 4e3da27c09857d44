#!/usr/bin/env node
/**
 * The last step of `npm run build`: zod and yaml are bundled into one file each (dist/vendor/zod.js,
 * dist/vendor/yaml.js) and the compiled modules in dist/ import them from there.
 *
 * Why: on the main thread of `skillopt test` both load before the first model request, and Node 20 has no
 * module compile cache, so their module count costs: zod is 95 modules (its locales included), yaml about
 * 25. Bundled, importing zod went from about 60 ms to 27 ms and yaml from 30–45 ms to 16 ms
 * (scripts/bench-throughput.mjs measures the whole effect). The sources keep importing the packages, so
 * the types and the tests use them unchanged; the bundles are the same versions, not a fork.
 *
 *   node scripts/vendor-deps.mjs [distDir]
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { rolldown } from 'rolldown';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const dist = resolve(process.argv[2] ?? join(REPO, 'dist'));
const VENDORED = ['zod', 'yaml'];
const require = createRequire(import.meta.url);

/**
 * A package's ES module entry: its `import` export, else its `default` one. yaml's `node` entry is
 * CommonJS, which would bundle to a default export only; its `default` entry is the same code as ESM.
 */
function esmEntry(name) {
  const pkgFile = require.resolve(`${name}/package.json`);
  const dot = JSON.parse(readFileSync(pkgFile, 'utf8')).exports?.['.'];
  const target = typeof dot === 'object' && dot !== null ? (dot.import ?? dot.default) : null;
  if (typeof target !== 'string') throw new Error(`vendor-deps: ${name} has no ES module entry in its package.json exports`);
  return join(dirname(pkgFile), target);
}

async function bundle(name) {
  const out = join(dist, 'vendor', `${name}.js`);
  const build = await rolldown({ input: esmEntry(name), cwd: REPO, platform: 'node', logLevel: 'silent' });
  await build.write({ file: out, format: 'esm', banner: `// ${name} bundled by scripts/vendor-deps.mjs (one module loads faster than many)` });
  await build.close();
}

function* jsFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (path !== join(dist, 'vendor')) yield* jsFiles(path);
    } else if (entry.name.endsWith('.js')) yield path;
  }
}

/** Points a compiled module's `from 'zod'` / `import('zod')` (either quote) at the bundle. */
function rewriteImports(source, fromFile, vendorDir) {
  let text = source;
  for (const name of VENDORED) {
    let rel = relative(dirname(fromFile), join(vendorDir, `${name}.js`)).split(sep).join('/');
    if (!rel.startsWith('.')) rel = `./${rel}`;
    text = text.replace(new RegExp(`(\\bfrom\\s*|\\bimport\\s*\\(\\s*)(['"])${name}\\2`, 'g'), `$1'${rel}'`);
  }
  return text;
}

mkdirSync(join(dist, 'vendor'), { recursive: true });
await Promise.all(VENDORED.map(bundle));
let rewritten = 0;
for (const file of jsFiles(dist)) {
  const source = readFileSync(file, 'utf8');
  const text = rewriteImports(source, file, join(dist, 'vendor'));
  if (text !== source) {
    writeFileSync(file, text);
    rewritten++;
  }
}
console.log(`vendor-deps: bundled ${VENDORED.join(', ')} into ${relative(REPO, join(dist, 'vendor')) || '.'}; ${rewritten} module(s) import them from there`);
