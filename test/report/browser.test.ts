/**
 * The HTML reports in a real browser: Debian's Chromium (`apt-get install chromium`; `.ci/run` installs
 * it when missing; CHROMIUM_PATH overrides /usr/bin/chromium) driven by playwright-core. Reports of every
 * kind are made by the compiled CLI as a user would (a test run and an eval of the mini fixture, an
 * optimize run of the mini fixture, a comparison of the two evals, a matrix of 2 models × 2 skills), then each is opened from disk in one
 * browser: its chart has points, its table has rows, filtering and sorting work, a row opens, nothing
 * but the file itself is requested, no script error. A screenshot of each is saved under
 * test-output/screenshots/. No timing assertions: every wait is for a selector.
 *
 * Without Chromium the test fails, saying how to install it (CI installs it; it must not skip).
 */
import { cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, MINI, MINI_ORACLE_SKILL, REPO, skillopt, tempDirs, writeFile } from '../e2e/helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-output', 'screenshots');

const tmp = tempDirs('browser');
let browser: Browser | undefined;
const dirs = {
  test: '',
  eval: '',
  eval2: '',
  optimize: '',
  traj: '',
  trajBase: '',
  trajCand: '',
  attr: '',
  matrix: '',
};

/** The mini seed with a rule that fixes the `ECONNRESET` cases and one that hijacks a disk case (`service stopped` is the longer trigger). */
const MINI_ATTRIBUTED_RULES =
  '- When the input mentions `ECONNRESET`, answer `network`.\n- When the input mentions `service stopped`, answer `network`.\n';

/**
 * A copy of a run folder whose results rows carry a trajectory (docs/agents.md) — the tool loop writes
 * them; here they are added to the rows of a real run — first call's command from `cmd(row)`.
 */
function withTrajectories(from: string, to: string, cmd: (row: { id: string; pass: boolean }) => string): void {
  cpSync(from, to, { recursive: true });
  const file = join(to, 'results.jsonl');
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { id: string; pass: boolean; output: string });
  const out = rows.map((r) => ({
    ...r,
    trajectory: [
      {
        turn: 1,
        kind: 'assistant',
        content: `Checking ${r.id} first.`,
        tool_calls: [{ id: 'call_1', name: 'run_command', args: { cmd: cmd(r) } }],
      },
      {
        turn: 1,
        kind: 'tool',
        tool_call_id: 'call_1',
        result: {
          name: 'run_command',
          ok: true,
          content: `${'log line\n'.repeat(500).slice(0, 4096)}… [clipped: 5000 chars in all]`,
          ms: 7,
        },
      },
      {
        turn: 2,
        kind: 'assistant',
        tool_calls: [{ id: 'call_2', name: 'read_file', args: { path: `logs/${r.id}.txt` } }],
      },
      {
        turn: 2,
        kind: 'tool',
        tool_call_id: 'call_2',
        result: { name: 'read_file', ok: false, content: 'no such file: logs/' + r.id + '.txt', ms: 2 },
      },
      { turn: 3, kind: 'assistant', content: r.output },
    ],
    turns: 3,
    tool_calls: 2,
  }));
  writeFileSync(file, out.map((r) => JSON.stringify(r)).join('\n') + '\n');
}

beforeAll(async () => {
  assertBuilt();
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install it (apt-get install chromium — .ci/run does when it is missing) or set CHROMIUM_PATH`,
    );
  }
  mkdirSync(SHOTS, { recursive: true });
  const root = tmp.make('runs');
  dirs.test = join(root, 'test');
  dirs.eval = join(root, 'eval');
  dirs.eval2 = join(root, 'eval2');
  dirs.optimize = join(root, 'optimize');
  const oracle = writeFile(join(root, 'oracle.md'), MINI_ORACLE_SKILL);
  dirs.matrix = join(root, 'matrix');
  const [t, e1, e2, o, mx] = await Promise.all([
    skillopt([
      'test',
      '--config',
      'configs/mini/sim.yaml',
      '--trials',
      '2',
      '--cfg-options',
      `env.out_root=${dirs.test}`,
      'model.simulated.noise=0.3',
    ]),
    skillopt([
      'eval',
      '--config',
      'configs/mini/sim.yaml',
      '--skill',
      'skills/mini/initial.md',
      '--cfg-options',
      `env.out_root=${dirs.eval}`,
    ]),
    skillopt([
      'eval',
      '--config',
      'configs/mini/sim.yaml',
      '--skill',
      oracle,
      '--cfg-options',
      `env.out_root=${dirs.eval2}`,
      'model.simulated.noise=0.2',
    ]),
    // a seeded analyst that sometimes proposes a bad rule: the gate rejects a step
    skillopt([
      'test',
      '--optimize',
      '--target',
      '1',
      '--config',
      'configs/mini/sim.yaml',
      '--cfg-options',
      `env.out_root=${dirs.optimize}`,
      'model.simulated.analyst_error_rate=0.3',
      'evaluation.gate_test=strict',
    ]),
    // a matrix (docs/matrix.md): the seed and the oracle skill on two simulated profiles (the seed's one rule
    // passes some cases in every cell: they do not differ)
    skillopt([
      'eval',
      '--config',
      'configs/mini/sim.yaml',
      '--models',
      'sim-small,sim-large',
      '--skills',
      `seed,oracle=${oracle}`,
      '--split',
      'test',
      '--parallel-cells',
      '1',
      '--cfg-options',
      `env.out_root=${dirs.matrix}`,
      'model.simulated.latency_scale=0',
    ]),
  ]);
  for (const r of [e1, e2, mx]) expect(r.code, r.all).toBe(0);
  expect([0, 1], t.all).toContain(t.code);
  expect([0, 1], o.all).toContain(o.code);
  expect(o.stdout, o.all).toContain('[skillopt] report: ');
  const c = await skillopt(['compare', dirs.eval, dirs.eval2]);
  expect(c.code, c.all).toBe(0);
  // trajectories: a test run's report, and a comparison whose regressed cases part at their first call
  dirs.traj = join(root, 'traj');
  dirs.trajBase = join(root, 'traj-base');
  dirs.trajCand = join(root, 'traj-cand');
  withTrajectories(dirs.test, dirs.traj, () => 'python -m skillopt.train --smoke');
  withTrajectories(dirs.eval2, dirs.trajBase, () => 'python -m skillopt.train --smoke');
  withTrajectories(dirs.eval, dirs.trajCand, (r) =>
    r.pass ? 'python -m skillopt.train --smoke' : 'python -m skillopt.train',
  );
  const [rt, ct] = await Promise.all([
    skillopt(['report', dirs.traj]),
    skillopt(['compare', dirs.trajBase, dirs.trajCand]),
  ]);
  expect(rt.code, rt.all).toBe(0);
  expect([0, 1], ct.all).toContain(ct.code);
  // an attributed comparison: the seed's eval against the seed with two rules added (docs/attribution.md)
  dirs.attr = join(root, 'attr');
  const attributed = writeFile(
    join(root, 'attributed.md'),
    readFileSync(join(MINI, 'skills', 'mini', 'initial.md'), 'utf8') + MINI_ATTRIBUTED_RULES,
  );
  const ea = await skillopt([
    'eval',
    '--config',
    'configs/mini/sim.yaml',
    '--skill',
    attributed,
    '--cfg-options',
    `env.out_root=${dirs.attr}`,
  ]);
  expect(ea.code, ea.all).toBe(0);
  const ca = await skillopt(['compare', dirs.eval, dirs.attr, '--attribute', '--config', 'configs/mini/sim.yaml']);
  expect(ca.code, ca.all).toBe(0);
  browser = await chromium.launch({ executablePath: CHROMIUM });
});

afterAll(async () => {
  await browser?.close();
  tmp.cleanup();
});

interface Opened {
  page: Page;
  requests: string[];
  errors: string[];
}

/** Open a report from disk: every request is recorded, and any that is not the file itself (or one of `also`) is refused. */
async function open(file: string, also: string[] = []): Promise<Opened> {
  const url = pathToFileURL(file).href;
  const allowed = new Set([url, ...also.map((f) => pathToFileURL(f).href)]);
  const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  await context.route('**/*', (route) => {
    const u = route.request().url();
    requests.push(u);
    return allowed.has(u) ? route.continue() : route.abort();
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(url);
  await page.waitForSelector('body[data-ready]');
  return { page, requests, errors };
}

/** The file alone holds everything: no resource reference of any scheme, no URL at all. */
function expectSelfContained(file: string, maxBytes: number): void {
  const html = readFileSync(file, 'utf8');
  expect(statSync(file).size).toBeLessThan(maxBytes);
  expect(html).not.toMatch(/https?:/i);
  expect(html).not.toContain('://');
  expect(html).not.toMatch(/\b(src|href)\s*=\s*["']?\s*(?!#)[\w-]+:/i);
  expect(html).not.toMatch(/url\s*\(|@import|\bfetch\s*\(|XMLHttpRequest|\bimport\s*\(/);
  expect(html).toContain("default-src 'none'");
}

async function finish(o: Opened, name: string, file: string): Promise<void> {
  await o.page.evaluate('window.scrollTo(0, 0)');
  await o.page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  expect(o.errors).toEqual([]);
  expect(o.requests).toEqual([pathToFileURL(file).href]);
  await o.page.context().close();
}

const rowCount = (page: Page, table = '#cases-table') => page.locator(`${table} tbody tr.row`).count();
const columnTexts = (page: Page, index: number, table = '#cases-table') =>
  page.locator(`${table} tbody tr.row td:nth-child(${index})`).allTextContents();

/** The shared checks of a case table: rows, filter by status and by text, sort both ways, a row opens. */
async function checkCaseTable(page: Page, opts: { scoreColumn: number; statusColumn: number }): Promise<void> {
  const total = await rowCount(page);
  expect(total).toBeGreaterThan(0);
  await expect.poll(() => page.locator('#cases-table [data-role=count]').textContent()).toMatch(/^rows 1–\d+ of \d+$/);

  // filter by status: only failing rows stay, and the count says it is filtered
  await page.selectOption('#cases-table select[data-filter="status"]', 'fail');
  await expect
    .poll(() => page.locator('#cases-table [data-role=count]').textContent())
    .toMatch(/filtered from|no rows match/);
  const statuses = await columnTexts(page, opts.statusColumn);
  expect(statuses.every((s) => s.startsWith('fail'))).toBe(true);
  await page.selectOption('#cases-table select[data-filter="status"]', '');
  await expect.poll(() => rowCount(page)).toBe(total);

  // filter by text: one id
  const firstId = (await page.locator('#cases-table tbody tr.row td.id').first().textContent())!;
  await page.fill('#cases-table input[data-role=search]', firstId);
  await expect.poll(() => rowCount(page)).toBe(1);
  await page.fill('#cases-table input[data-role=search]', '');
  await expect.poll(() => rowCount(page)).toBe(total);

  // sort by score, ascending then descending
  const score = page.locator('#cases-table th[data-key="score"]');
  await score.click();
  await attribute(score, 'aria-sort', 'ascending');
  const asc = (await columnTexts(page, opts.scoreColumn)).map(Number);
  expect(asc).toEqual([...asc].sort((a, b) => a - b));
  await score.click();
  await attribute(score, 'aria-sort', 'descending');
  const desc = (await columnTexts(page, opts.scoreColumn)).map(Number);
  expect(desc).toEqual([...desc].sort((a, b) => b - a));

  // a row opens: its messages are there
  await page.locator('#cases-table tbody tr.row').first().click();
  await visible(page.locator('#cases-table tr.detail .msg'));
}

/** Wait until the element has the attribute value (Vitest's expect has no Playwright matchers). */
async function attribute(locator: Locator, name: string, value: string): Promise<void> {
  await locator
    .and(locator.page().locator(`[${name}="${value}"]`))
    .first()
    .waitFor({ state: 'attached' });
}

async function visible(locator: Locator): Promise<void> {
  await locator.first().waitFor({ state: 'visible' });
}

describe('the HTML reports in Chromium', () => {
  test('a test run (2 trials): dot plot of pass rates, the case table filters and sorts, flaky column, no request', async () => {
    const file = join(dirs.test, 'report.html');
    expectSelfContained(file, 2_000_000);
    const o = await open(file);
    const { page } = o;
    expect(await page.locator('#breakdown svg.chart circle.pt').count()).toBeGreaterThan(2);
    expect(await page.locator('#cases-table th[data-key="flaky"]').count()).toBe(1);
    await checkCaseTable(page, { statusColumn: 4, scoreColumn: 5 });
    await finish(o, 'test', file);
  });

  test('an eval run: verdict, breakdown, the case table', async () => {
    const file = join(dirs.eval, 'report.html');
    expectSelfContained(file, 2_000_000);
    const o = await open(file);
    const { page } = o;
    await visible(page.locator('#verdict-badge'));
    expect(await page.locator('#breakdown svg.chart circle.pt').count()).toBeGreaterThan(2);
    await checkCaseTable(page, { statusColumn: 4, scoreColumn: 5 });
    await finish(o, 'eval', file);
  });

  test('an optimize run: the val curve with accepted/rejected points, schedule, costs, steps and their edits, the diff', async () => {
    const file = join(dirs.optimize, 'report.html');
    expectSelfContained(file, 2_000_000);
    const history = JSON.parse(readFileSync(join(dirs.optimize, 'history.json'), 'utf8')) as Array<{
      action: string;
      selection_pass_rate?: number;
    }>;
    const o = await open(file);
    const { page } = o;
    // one point for the initial skill and one per step that made a candidate
    const candidates = history.filter((h) => h.selection_pass_rate !== undefined).length;
    expect(await page.locator('#curve svg.chart circle.pt.accepted, #curve svg.chart circle.pt.rejected').count()).toBe(
      candidates,
    );
    expect(await page.locator('#curve svg.chart circle.pt.baseline').count()).toBe(1);
    expect(await page.locator('#schedule svg.chart path.s-plan').count()).toBe(1);
    // the skill size per step: the initial skill, one point per candidate, the current skill's line, the best skill's size
    expect(await page.locator('#size svg.chart circle.pt.baseline').count()).toBe(1);
    expect(await page.locator('#size svg.chart circle.pt.accepted, #size svg.chart circle.pt.rejected').count()).toBe(
      candidates,
    );
    expect(await page.locator('#size svg.chart path.s-cur').count()).toBe(1);
    expect(await page.locator('#size svg.chart line.target').count()).toBe(1);
    expect(await page.locator('#size p').textContent()).toContain('chosen by cheapest_within');
    expect(await page.locator('#costs svg.chart rect').count()).toBeGreaterThan(0);
    // the steps table: one row per step; filter by outcome; a step opens on its edits
    expect(await rowCount(page, '#steps-table')).toBe(history.length);
    expect(history.some((h) => h.action === 'reject')).toBe(true);
    expect(await page.locator('#curve svg.chart circle.pt.rejected').count()).toBe(
      history.filter((h) => h.action === 'reject').length,
    );
    const outcome = 'rejected';
    await page.selectOption('#steps-table select[data-filter="outcome"]', outcome);
    const shown = await columnTexts(page, 3, '#steps-table');
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.every((s) => s.startsWith(outcome))).toBe(true);
    await page.locator('#steps-table tbody tr.row').first().click();
    await visible(page.locator('#steps-table tr.detail table.edits tbody tr'));
    expect(await page.locator('#skill-diff .add').count()).toBeGreaterThan(0);
    // the initial skill's outcome beside every test case (looked up by suite and id in the embedded data)
    const keys = await page
      .locator('#cases-table thead th')
      .evaluateAll((ths) => ths.map((th) => th.getAttribute('data-key')));
    expect(keys).toContain('baseline');
    const initial = await columnTexts(page, keys.indexOf('baseline') + 1);
    expect(initial.length).toBe(await rowCount(page));
    expect(
      initial.every((t) => /^(pass|fail|errored)/.test(t.trim())),
      initial.join(' | '),
    ).toBe(true);
    await checkCaseTable(page, { statusColumn: 4, scoreColumn: 6 });
    await finish(o, 'optimize', file);
  });

  test("a case's trajectory: a click on the case opens its timeline (calls with arguments, results with ok/error, ms, clipped)", async () => {
    const file = join(dirs.traj, 'report.html');
    expectSelfContained(file, 2_000_000);
    const o = await open(file);
    const { page } = o;
    await page.locator('#cases-table tbody tr.row').first().click();
    const timeline = page.locator('#cases-table tr.detail ol.traj');
    await visible(timeline);
    expect(await timeline.locator('li.turn').count()).toBe(3);
    const call = timeline.locator('li.step.call').first();
    expect(await call.locator('.tool').textContent()).toBe('run_command');
    expect(await call.locator('.args').textContent()).toBe('{"cmd":"python -m skillopt.train --smoke"}');
    const results = timeline.locator('li.step.result');
    expect(await results.count()).toBe(2);
    expect(await results.nth(0).textContent()).toMatch(/run_command ok 7 ms clipped/);
    expect(await results.nth(1).textContent()).toMatch(/read_file error 2 ms/);
    expect(await results.nth(1).locator('pre').textContent()).toMatch(/^no such file: logs\//);
    expect(await timeline.locator('li.step.assistant').count()).toBe(2);
    await finish(o, 'trajectory', file);
  });

  test('a comparison of runs with trajectories: each regressed case names the first divergent step', async () => {
    const file = join(dirs.trajCand, 'compare.html');
    const compare = JSON.parse(readFileSync(join(dirs.trajCand, 'compare.json'), 'utf8')) as {
      regressed: Array<{ divergence?: unknown }>;
    };
    expect(compare.regressed.length).toBeGreaterThan(0);
    expect(compare.regressed.every((x) => x.divergence !== undefined)).toBe(true);
    const o = await open(file);
    const { page } = o;
    const parted = page.locator('#regressed-table tr.divergence');
    expect(await parted.count()).toBe(compare.regressed.length);
    expect(await parted.first().textContent()).toContain(
      'step 1: baseline turn 1 call run_command {"cmd":"python -m skillopt.train --smoke"} · candidate turn 1 call run_command {"cmd":"python -m skillopt.train"}',
    );
    await finish(o, 'compare-trajectory', file);
  });

  test('an attributed comparison: "Which change did it" lists each unit with its cases, each a link to its row', async () => {
    const file = join(dirs.attr, 'compare.html');
    expectSelfContained(file, 2_000_000);
    type Ref = { suite: string; id: string };
    const compare = JSON.parse(readFileSync(join(dirs.attr, 'compare.json'), 'utf8')) as {
      regressed: Ref[];
      fixed: Ref[];
      attribution: {
        units: Array<{ id: string; text: string; breaks: Ref[]; fixes: Ref[] }>;
        combos: Array<{ units: string[] }>;
        unexplained: Ref[];
      };
    };
    const a = compare.attribution;
    const breaker = a.units.find((u) => u.breaks.length > 0)!;
    expect(breaker.text).toBe('- When the input mentions `service stopped`, answer `network`.');
    const o = await open(file);
    const { page } = o;
    const section = page.locator('section#attribution');
    expect(await section.locator('h2').textContent()).toBe('Which change did it');
    const explaining = a.units.filter(
      (u) => u.breaks.length + u.fixes.length > 0 || a.combos.some((c) => c.units.includes(u.id)),
    );
    expect(await section.locator('#attribution-table tr.unit').count()).toBe(explaining.length);
    const row = section.locator(`#unit-${breaker.id}`);
    expect(await row.locator('.unit-text').textContent()).toBe(breaker.text);
    expect(await section.locator('#attribution-combos li').count()).toBe(a.combos.length);
    // the link to a broken case leads to its row in the regressed table, which links back to the unit
    const link = row.locator('td.breaks a.case-link').first();
    expect(await link.textContent()).toBe(breaker.breaks[0]!.id);
    // each blame carries its confirmation: the counts and p in its title, the unit's largest adjusted p in its row
    expect(await row.locator('td.breaks span[title]').first().getAttribute('title')).toMatch(
      /^reverted \d+\/\d+ pass, candidate \d+\/\d+; p = \S+, adjusted \S+$/,
    );
    expect(await row.locator('td.num').last().textContent()).toMatch(/^\d/);
    await link.click();
    const target = page.locator('tr:target');
    await visible(target);
    expect(await target.locator('td.id').textContent()).toBe(breaker.breaks[0]!.id);
    expect(await page.locator('#regressed-table tr:target').count()).toBe(1);
    expect(await target.locator(`td.by a[href="#unit-${breaker.id}"]`).count()).toBe(1);
    // every changed case has its row and its "which change" cell
    expect(await page.locator('#regressed-table tbody tr td.by').count()).toBe(compare.regressed.length);
    expect(await page.locator('#fixed-table tbody tr td.by').count()).toBe(compare.fixed.length);
    await finish(o, 'compare-attribution', file);
  });

  test('a comparison: regressed and fixed first, both answers side by side, all cases', async () => {
    const file = join(dirs.eval2, 'compare.html');
    expectSelfContained(file, 2_000_000);
    const o = await open(file);
    const { page } = o;
    expect(await page.locator('#overview svg.chart circle.pt').count()).toBe(3);
    const compare = JSON.parse(readFileSync(join(dirs.eval2, 'compare.json'), 'utf8'));
    expect(await page.locator('#fixed-table tbody tr').count()).toBe(compare.fixed.length);
    // without an attribution in compare.json, no such section
    expect(await page.locator('section#attribution').count()).toBe(0);
    // the full table starts with what changed
    const first = await columnTexts(page, 2);
    expect(first[0]).toBe(compare.regressed.length ? 'regressed' : 'fixed');
    await page.selectOption('#cases-table select[data-filter="status"]', 'fixed');
    await expect.poll(() => rowCount(page)).toBe(compare.fixed.length);
    await page.locator('#cases-table tbody tr.row').first().click();
    await visible(page.locator('#cases-table tr.detail .side'));
    await finish(o, 'compare', file);
  });
  test("a matrix: the heatmap with intervals, the lifts, the cost frontier; the per-case grid keeps the cases that differ and a click opens the case in its cell's report", async () => {
    const file = join(dirs.matrix, 'matrix.html');
    expectSelfContained(file, 2_000_000);
    const matrix = JSON.parse(readFileSync(join(dirs.matrix, 'matrix.json'), 'utf8'));
    const small = matrix.cells.findIndex(
      (c: { model: string; skill: string }) => c.model === 'sim-small' && c.skill === 'oracle',
    );
    const cellReport = join(dirs.matrix, matrix.cells[small].dir, 'report.html');
    const o = await open(file, [cellReport]);
    const { page } = o;
    // the heatmap: one row per model, one column per skill, each cell with its interval and (for the oracle) its lift
    expect(await page.locator('#heatmap tbody tr').count()).toBe(2);
    expect(await page.locator('#heatmap tbody td[data-cell]').count()).toBe(4);
    expect(await page.locator('#heatmap tbody td[data-cell]').first().textContent()).toMatch(
      /^\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]/,
    );
    const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
    expect(await page.locator('#heatmap tbody td[data-cell] .st').allTextContents()).toEqual(
      matrix.lifts.map((l: { delta: number; verdict: string }) => `${signed(l.delta)} ${l.verdict}`),
    );
    // the lifts with intervals: a dot and a line each
    expect(await page.locator('#lifts svg.chart circle.pt').count()).toBe(matrix.lifts.length);
    expect(await page.locator('#lifts svg.chart line.ci').count()).toBe(matrix.lifts.length);
    // cost per passing case against pass rate: the cells that passed something, the frontier, the tie groups
    const priced = matrix.cells.filter(
      (c: { cost_per_pass: number | null }) => c.cost_per_pass !== null && c.cost_per_pass > 0,
    ).length;
    expect(priced).toBeGreaterThan(1);
    expect(await page.locator('#scatter svg.chart circle.pt').count()).toBe(priced);
    expect(await page.locator('#scatter .legend').textContent()).toContain('tie group 1');
    expect(await page.locator('#frontier').textContent()).toContain(matrix.frontier.statements[0]);
    // the per-case grid: every case, then only those that differ between cells
    const total = await rowCount(page, '#grid-table');
    expect(total).toBe(matrix.cases.length);
    await page.selectOption('#grid-table select[data-filter="differs"]', 'different only');
    await expect.poll(() => rowCount(page, '#grid-table')).toBe(matrix.case_counts.differs);
    expect(matrix.case_counts.differs).toBeLessThan(total);
    // a click on sim-small × oracle's outcome of the first case shown: that case, opened in the cell's report
    const link = page.locator(`#grid-table tbody tr.row a.case-cell[data-cell="${small}"]`).first();
    const id = (await page.locator('#grid-table tbody tr.row td.id').first().textContent())!;
    await link.click();
    await page.waitForURL(/report\.html#case=/);
    await page.waitForSelector('body[data-ready]');
    await visible(page.locator('#linked-case'));
    expect(await page.locator('#linked-case td.id').textContent()).toBe(id);
    await visible(page.locator('#cases-table tr.detail .msg'));
    await page.screenshot({ path: join(SHOTS, 'matrix-case.png') });
    expect(o.errors).toEqual([]);
    expect(o.requests).toEqual([pathToFileURL(file).href, pathToFileURL(cellReport).href]);
    await page.context().close();
  });
});
