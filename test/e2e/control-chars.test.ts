/**
 * An endpoint whose replies hold terminal control sequences (OSC retitle ending in BEL, CSI clear screen in
 * its 7-bit and C1 spellings) cannot drive the user's terminal: `skillopt eval`, `skillopt test` and
 * `skillopt show` print them as `\x1b`, `\x07`, `\x9b`, and so does the GitHub step summary. Nor can the
 * other strings a model chooses (a tool name, an argument key, an error body): `show --case` and `compare`
 * (its table, `--markdown`, `--json`) print them escaped too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.ts';
import { EVIL_NAME, evilRuns, SHOWN_BODY, SHOWN_KEY, SHOWN_NAME } from '../helpers/model-text.ts';
import { assertBuilt, skillopt, tempDirs, writeConfig } from './helpers.ts';

const tmp = tempDirs('controls');
let srv: FaultServer | undefined;
const EVIL = 'unsure\u001b]0;pwned\u0007\u001b[2J\u009b2J';
const SHOWN = 'unsure\\x1b]0;pwned\\x07\\x1b[2J\\x9b2J';

beforeAll(async () => {
  assertBuilt();
  srv = await startFaultServer([], { fallback: { content: EVIL } });
});

afterAll(async () => {
  await srv?.close();
  tmp.cleanup();
});

/** Control characters other than newline and tab (the children print without colour: NO_COLOR). */
const rawControls = (text: string): string[] =>
  [...text.matchAll(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g)].map((m) => m[0]);

test('eval, test and show print model output with its control characters escaped; the step summary too', async () => {
  const dir = tmp.make('evil');
  const config = writeConfig(
    dir,
    'local.yaml',
    `model:\n  backend: openai_compat\n  base_url: ${srv!.baseURL}\n  optimizer: mitko\n  target: mitko\nenv:\n  name: mini\n  split_ratio: "4:2:4"\n  workers: 2\n`,
  );
  const env = { OPENAI_COMPATIBLE_API_KEY: 'not-needed' };
  const common = ['--config', config, '--skill', 'skills/mini/initial.md', '--model-cache', 'off'];

  const evalRun = await skillopt(
    ['eval', ...common, '--split', 'test', '--cfg-options', `env.out_root=${join(dir, 'eval')}`],
    { env },
  );
  expect(evalRun.code, evalRun.all).toBe(0);
  expect(evalRun.stdout).toContain('worst cases');
  expect(evalRun.all).toContain(SHOWN);
  expect(rawControls(evalRun.all)).toEqual([]);

  const summary = join(dir, 'step-summary.md');
  const testRun = await skillopt(['test', ...common, '--cfg-options', `env.out_root=${join(dir, 'test')}`], {
    env: { ...env, GITHUB_STEP_SUMMARY: summary },
  });
  expect(testRun.code, testRun.all).toBe(1); // every answer is wrong
  expect(testRun.all).toContain(SHOWN);
  expect(rawControls(testRun.all)).toEqual([]);
  const md = readFileSync(summary, 'utf8');
  expect(md).toContain('\\x1b]0;pwned\\x07');
  expect(rawControls(md)).toEqual([]);

  const show = await skillopt(['show', join(dir, 'eval')]);
  expect(show.code, show.all).toBe(0);
  expect(show.stdout).toContain('unsure\\x1b]0;pwned\\x07'); // the answer column is clipped
  expect(rawControls(show.all)).toEqual([]);
});

test('a tool name, an argument key and an error body reach no stream raw: show --case, compare, --markdown, --json', async () => {
  const { base, cand } = evilRuns(tmp.make('model-text'));
  const out = tmp.make('model-text-out');
  const [traj, err, table, md, json] = await Promise.all([
    skillopt(['show', cand, '--case', 't-1']),
    skillopt(['show', cand, '--case', 't-2']),
    skillopt(['compare', base, cand, '--out', out]),
    skillopt(['compare', base, cand, '--out', out, '--markdown']),
    skillopt(['compare', base, cand, '--out', out, '--json']),
  ]);
  for (const r of [traj, err, table, md, json]) {
    expect(r.code, r.all).toBe(0);
    expect(rawControls(r.all)).toEqual([]);
  }
  expect(traj.stdout).toContain(SHOWN_NAME);
  expect(traj.stdout).toContain(SHOWN_KEY);
  expect(traj.stdout).toContain(SHOWN_BODY);
  expect(err.stdout).toContain(SHOWN_BODY);
  for (const r of [table, md]) {
    expect(r.stdout).toContain(SHOWN_NAME);
    expect(r.stdout).toContain(SHOWN_KEY);
  }
  // --json prints the data as it is (the C1 and DEL characters as \u escapes), the same as compare.json
  const printed = JSON.parse(json.stdout);
  expect(printed.regressed[0].divergence.candidate.name).toBe(EVIL_NAME);
  expect(printed).toEqual(JSON.parse(readFileSync(`${out}/compare.json`, 'utf8')));
});
