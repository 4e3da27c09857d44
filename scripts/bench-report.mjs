#!/usr/bin/env node
// Report benchmark (a script, not a timed test): what report.html costs (against its limits).
//
// 1. A 10,000-case report: size (≤ 10 MB) and the time it takes Chromium to open it (≤ 2 s), for cases
//    like this repository's (dotnetdebug inputs, the skill as the system message, short answers) and with
//    long answers (2,000 characters each, clipped in the report). Open time = from navigation start to the
//    page's "drawn" mark (tables and charts built), read from the page's own clock; plus the wall time of
//    sorting the 10,000-row table once.
// 2. The cost of writing a report at the end of a 1,000-case `skillopt test` (≤ 5% of its wall time): one
//    real run of 1,000 cases on the simulated model (50 ms latency, concurrency 32, as
//    scripts/bench-throughput.mjs), then the report write the reporter makes, timed on that run's rows.
//
//   npm run build && node scripts/bench-report.mjs [--cases 10000] [--chromium /usr/bin/chromium] [--skip-run]
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeBenchProject } from './bench-project.mjs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const N = Number(arg('cases', 10000));
const chromiumPath = arg('chromium', process.env.CHROMIUM_PATH || '/usr/bin/chromium');
const repo = fileURLToPath(new URL('..', import.meta.url));
const work = join(repo, '.skillopt', 'bench-report');
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const { runSummary } = await import(join(repo, 'dist/suite/summary.js'));
const { buildRunReport } = await import(join(repo, 'dist/report/index.js'));
const { chromium } = await import(join(repo, 'node_modules/playwright-core/index.mjs'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const tasks = JSON.parse(readFileSync(join(repo, 'benchmarks/dotnetdebug/tasks.json'), 'utf8'));
const skill = readFileSync(join(repo, 'skills/dotnetdebug/initial.md'), 'utf8');
const labels = [...new Set(tasks.map((t) => t.expected))];

function records(n, answerChars) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = tasks[i % tasks.length];
    const pass = (i * 7919) % 10 < 6;
    const got = pass ? t.expected : labels[(i * 31) % labels.length];
    const output =
      answerChars > 0
        ? `${got}. ${'The stack trace shows the object was used after disposal; '.repeat(Math.ceil(answerChars / 58))}`.slice(
            0,
            answerChars,
          )
        : got;
    out.push({
      suite: 'dotnetdebug',
      id: `case-${String(i).padStart(5, '0')}`,
      split: ['train', 'val', 'test'][i % 3],
      task_type: t.task_type ?? null,
      skill_hash: 'bench',
      messages: [
        { role: 'system', content: skill },
        { role: 'user', content: `${t.input} (variant ${i})` },
      ],
      output,
      expected: t.expected,
      hard: pass ? 1 : 0,
      soft: pass ? 1 : 0.25,
      pass,
      feedback: pass
        ? `label \`${t.expected}\` is correct`
        : `expected label \`${t.expected}\`, got \`${got}\`; the answer must name the root cause first`,
      usage: { calls: 1, attempts: 1, prompt_tokens: 900 + (i % 300), completion_tokens: 12 },
      latency_ms: 40 + (i % 90),
      cached: false,
      error_kind: i % 997 === 0 ? 'infra' : null,
      error: i % 997 === 0 ? 'endpoint timed out after 3 retries' : null,
      simulated: true,
    });
  }
  return out;
}

function writeRun(dir, recs) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'results.jsonl'), recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const summary = runSummary(recs, { wallTimeS: 60 });
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(summary));
  return summary;
}

const browser = await chromium.launch({ executablePath: chromiumPath });
async function openTimes(file) {
  const ready = [];
  const wall = [];
  let sortMs = 0;
  for (let k = 0; k < 3; k++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const t0 = performance.now();
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-painted]');
    wall.push(performance.now() - t0);
    ready.push(Number(await page.getAttribute('body', 'data-painted')));
    if (k === 0) {
      // in the page: click the header, measure until the sorted first page is drawn
      sortMs = await page.evaluate(() => {
        const th = /** @type {any} */ (globalThis).document.querySelector('#cases-table th[data-key="score"]');
        const s0 = performance.now();
        th.click();
        return performance.now() - s0;
      });
    }
    await page.close();
  }
  return { ready: median(ready), wall: median(wall), sortMs };
}

console.log(`report benchmark — ${N} cases, Chromium ${browser.version()}`);
for (const [label, chars] of [
  ['short answers (labels)', 0],
  ['long answers (2,000 chars each)', 2000],
]) {
  const dir = join(work, `big-${chars}`);
  const recs = records(N, chars);
  const summary = writeRun(dir, recs);
  const times = [];
  let file = '';
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    file = buildRunReport(dir, { kind: 'test', records: recs, summary, command: 'bench' });
    times.push(performance.now() - t0);
  }
  const size = statSync(file).size;
  const open = await openTimes(file);
  console.log(
    `  ${label}: results.jsonl ${(statSync(join(dir, 'results.jsonl')).size / 1e6).toFixed(1)} MB → report.html ${(size / 1e6).toFixed(2)} MB (limit 10 MB); ` +
      `written in ${median(times).toFixed(0)} ms; opens in ${open.ready.toFixed(0)} ms (page clock; ${open.wall.toFixed(0)} ms wall incl. navigation; limit 2,000 ms); sorting ${N} rows by score ${open.sortMs.toFixed(0)} ms`,
  );
}
await browser.close();

if (!process.argv.includes('--skip-run')) {
  // a real 1,000-case `skillopt test`, then the report write the reporter makes on its rows
  const dir = join(work, 'run1000');
  writeBenchProject(dir, { cases: 1000, rules: 6 });
  writeFileSync(
    join(dir, 'bench.yaml'),
    `_base_: ${JSON.stringify(join(repo, 'configs/_base_/default.yaml'))}\nmodel: { backend: simulated, optimizer: mitko, target: mitko }\n`,
  );
  const out = join(dir, 'out');
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [
      join(repo, 'bin/skillopt.js'),
      'test',
      '--config',
      'bench.yaml',
      '--cfg-options',
      'model.backend=simulated',
      'model.simulated.latency_ms=50',
      'model.concurrency=32',
      'env.workers=32',
      'env.name=bench',
      `env.out_root=${out}`,
      'cache.mode=off',
    ],
    { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
  );
  const wall = (performance.now() - t0) / 1000;
  if (!statSync(join(out, 'report.html'), { throwIfNoEntry: false })) {
    console.log(r.stdout.slice(-2000), r.stderr.slice(-2000));
    throw new Error('the 1,000-case run wrote no report.html');
  }
  const recs = readFileSync(join(out, 'results.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  const times = [];
  for (let k = 0; k < 7; k++) {
    const s = performance.now();
    buildRunReport(out, { kind: 'test', records: recs, summary, command: 'bench' });
    times.push(performance.now() - s);
  }
  const w = median(times);
  console.log(
    `  1,000-case skillopt test: ${wall.toFixed(2)} s whole process (cases ${summary.wall_time_s.toFixed(2)} s); writing its report.html (${(statSync(join(out, 'report.html')).size / 1e6).toFixed(2)} MB) takes ${w.toFixed(1)} ms = ` +
      `${((w / 1000 / wall) * 100).toFixed(2)}% of the run (${((w / 1000 / summary.wall_time_s) * 100).toFixed(2)}% of its cases' time; limit 5%)`,
  );
}
