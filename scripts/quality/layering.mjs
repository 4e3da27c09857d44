/**
 * The structure goal, read from the source: modules under src/model, src/skill and src/suite that
 * import from src/optimizer or src/cli (static, type-only and dynamic imports, found by TypeScript's own
 * pre-processor so comments and strings do not count). test/architecture.test.ts holds the same rule.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const LOW = ['model', 'skill', 'suite'];
const HIGH = ['optimizer', 'cli'];

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** "from → to" for each offending import, e.g. "model/client.ts → optimizer/schemas.ts". */
export function layeringViolations(srcDir) {
  const posix = (p) => p.split(sep).join('/');
  const out = [];
  for (const file of sourceFiles(srcDir)) {
    const from = posix(relative(srcDir, file));
    if (!LOW.includes(from.split('/')[0])) continue;
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = posix(relative(srcDir, resolve(dirname(file), fileName)));
      if (HIGH.includes(to.split('/')[0])) out.push(`${from} → ${to}`);
    }
  }
  return [...new Set(out)];
}
