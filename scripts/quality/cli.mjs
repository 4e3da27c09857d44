/**
 * Running `node bin/skillopt.js` as a child process (each optimize run is its own process: the session
 * host is process-global, and a crash stays contained), and a small worker pool.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(REPO, 'bin', 'skillopt.js');

/** A child's environment: the caller's, less what a Vitest parent (this script's tests) would leak into it. */
const childEnv = () => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(VITEST|VITE_|TEST$|NODE_ENV$)/.test(k))),
  NO_COLOR: '1',
});

/**
 * Spawn `node <script> ...args` from the repository root; resolves with the exit code, stdout, and the
 * combined output (written to `logFile` when given). A run past `timeoutMs` is killed (code null).
 */
/** @param {string} script @param {string[]} args @param {{ logFile?: string, timeoutMs?: number }} [options] */
export function runNode(script, args, { logFile, timeoutMs = 15 * 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv(),
    });
    let out = '';
    let stdout = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (d) => {
      out += d;
      stdout += d;
    });
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (logFile) writeFileSync(logFile, out);
      resolve({ code: timedOut ? null : code, out, stdout, timedOut });
    });
  });
}

export const skillopt = (args, opts) => runNode(BIN, args, opts);

/** The last line of a child's output that reads like an error, for a one-line report. */
export function errorLine(out) {
  const lines = out
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.findLast((l) => /error|failure|failed/i.test(l)) ?? lines.at(-1) ?? '(no output)';
}

/**
 * The resolved config (`skillopt config --json`) of a config file with overrides, or why it does not load.
 * `{ config }` or `{ error }`; an unknown key becomes "key X not in this build".
 */
export async function resolveConfig(configPath, overrides) {
  const r = await skillopt([
    'config',
    '--json',
    '--config',
    configPath,
    ...(overrides.length ? ['--cfg-options', ...overrides] : []),
  ]);
  if (r.code === 0) return { config: JSON.parse(r.stdout) };
  const line = errorLine(r.out);
  const unknown = /([\w.]+): unknown key/.exec(line);
  return { error: unknown ? `key ${unknown[1]} not in this build` : line.replace(/^skillopt: error: /, '') };
}

/** Run `fn` over `items` with at most `jobs` in flight; results keep the items' order. */
export async function pool(items, jobs, fn) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, items.length)) }, worker));
  return results;
}
