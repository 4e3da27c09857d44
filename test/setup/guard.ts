/**
 * Setup file of the unit project (vitest.config.ts): each test file runs with a temp directory of its own and
 * no network beyond loopback, and fails when it breaks either rule.
 *
 * - Temp files: `os.tmpdir()` is pointed (TMPDIR) at a fresh folder for the file, so whatever is found in it
 *   when the file ends was left there by this file (or a child process it spawned with the environment
 *   inherited), whatever other files run at the same time. The folder is removed either way.
 * - Network: `net.Socket.prototype.connect` (every TCP and TLS client: the `openai` SDK's fetch, node:http)
 *   and `dns.lookup` refuse a host that is not loopback, by throwing, and the file fails even if the code under
 *   test caught the error. A child process started through `childEnv` (test/e2e/helpers.ts: the CLI under e2e
 *   tests, the README's commands) preloads test/setup/child-offline.mjs, which refuses the same connections and
 *   logs each to a file this guard reads when the test file ends (outside the file's temp directory).
 */
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { runFileEnd, runTestEnd } from '../helpers/cleanup.ts';

const LOOPBACK_NAMES = new Set(['localhost', '::1', '0:0:0:0:0:0:0:1']);

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return LOOPBACK_NAMES.has(h) || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(h);
}

const violations: string[] = [];

function refuse(what: string): Error {
  const message = `test guard (test/setup/guard.ts): ${what} is not loopback; tests reach 127.0.0.1 only`;
  violations.push(message);
  return new Error(message);
}

/** The host a `socket.connect(...)` call names, or null for a local (unix socket / pipe) connection. */
function connectHost(args: unknown[]): string | null {
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (first !== null && typeof first === 'object') {
    const o = first as { path?: string; host?: string; port?: unknown };
    if (o.path !== undefined) return null;
    return o.host ?? 'localhost';
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return null; // a path
  return typeof args[1] === 'string' ? args[1] : 'localhost';
}

const realConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
  const host = connectHost(args);
  if (host !== null && !isLoopbackHost(host)) throw refuse(`a connection to ${host}`);
  return (realConnect as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof net.Socket.prototype.connect;

const realLookup = dns.lookup;
dns.lookup = function guardedLookup(hostname: string, ...rest: unknown[]) {
  if (!isLoopbackHost(hostname)) throw refuse(`a DNS lookup of ${hostname}`);
  return (realLookup as (...a: unknown[]) => void).call(dns, hostname, ...rest);
} as typeof dns.lookup;
const realPromisesLookup = dns.promises.lookup;
dns.promises.lookup = function guardedPromisesLookup(hostname: string, ...rest: unknown[]) {
  if (!isLoopbackHost(hostname)) return Promise.reject(refuse(`a DNS lookup of ${hostname}`));
  return (realPromisesLookup as (...a: unknown[]) => Promise<unknown>).call(dns.promises, hostname, ...rest);
} as typeof dns.promises.lookup;
syncBuiltinESMExports();

const outerTmp = tmpdir();
const previousTmpdir = process.env.TMPDIR;
const fileTmp = mkdtempSync(join(outerTmp, 'skillopt-test-'));
process.env.TMPDIR = fileTmp;

/** Where this file's child processes log the connections child-offline.mjs refused (beside, not in, the temp dir). */
const childLog = `${fileTmp}.children.log`;
process.env.SKILLOPT_TEST_GUARD_LOG = childLog;
/** NODE_OPTIONS that guard a child process (test/e2e/helpers.ts `childEnv` passes it on). */
process.env.SKILLOPT_TEST_CHILD_NODE_OPTIONS = `--import=${fileURLToPath(new URL('./child-offline.mjs', import.meta.url))}`;

beforeAll(() => {
  violations.length = 0;
});

afterEach(runTestEnd);

afterAll(async () => {
  await runFileEnd();
  if (previousTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previousTmpdir;
  let left: string[] = [];
  try {
    left = readdirSync(fileTmp).sort();
  } finally {
    rmSync(fileTmp, { recursive: true, force: true });
  }
  const problems = [...violations];
  if (existsSync(childLog)) {
    problems.push(...readFileSync(childLog, 'utf8').split('\n').filter(Boolean));
    rmSync(childLog, { force: true });
  }
  if (left.length > 0)
    problems.push(`test guard (test/setup/guard.ts): left in the temp directory: ${left.join(', ')}`);
  if (problems.length > 0) throw new Error(problems.join('\n'));
});
