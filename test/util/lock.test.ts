/**
 * The run directory's lock (src/util/lock.ts): exclusive, names its holder, takes over a stale lock
 * (dead pid, or a pid reused by a later process) exactly once even when several processes race for it,
 * never takes over another host's lock, and is released by release(), on exit and on SIGTERM.
 * The multi-process cases run the compiled module (dist/, `npm run build` first) in child processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireRunLock, LOCK_FILE, RunLockError, type LockInfo } from '../../src/util/lock.ts';
import { assertBuilt, REPO } from '../e2e/helpers.ts';

const DIST_LOCK = join(REPO, 'dist', 'util', 'lock.js');
const dirs: string[] = [];
const children: ChildProcess[] = [];
beforeAll(assertBuilt);
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'skillopt-lock-'));
  dirs.push(d);
  return d;
}

/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

function staleLock(dir: string, pid: number, over: Partial<LockInfo> = {}): void {
  const info: LockInfo = {
    pid,
    host: hostname(),
    started_at: '2020-01-01T00:00:00.000Z',
    command: 'npx skillopt eval (gone)',
    token: `${pid}-deadbeef`,
    proc_start: null,
    ...over,
  };
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify(info));
}

/** A child process that takes the lock on `dir` and prints ACQUIRED or HELD <message>, then waits for stdin to close. */
function contender(dir: string): { child: ChildProcess; line: Promise<string> } {
  const script = `
    import { acquireRunLock } from ${JSON.stringify(DIST_LOCK)};
    try { acquireRunLock(${JSON.stringify(dir)}, { command: 'contender' }); console.log('ACQUIRED'); }
    catch (e) { console.log('HELD ' + e.message); process.exit(0); }
    process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const line = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('exit', (code) => reject(new Error(`contender exited (${code}) before reporting: ${out}`)));
  });
  return { child, line };
}

describe('run lock, in process', () => {
  test('exclusive: the second taker gets a one-line error naming the holder; release frees it', () => {
    const dir = tmp();
    const lock = acquireRunLock(dir, { command: 'npx skillopt eval --config x.yaml' });
    const info = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as LockInfo;
    expect(info).toMatchObject({ pid: process.pid, host: hostname(), command: 'npx skillopt eval --config x.yaml' });
    let err: unknown;
    try {
      acquireRunLock(dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RunLockError);
    expect((err as RunLockError).exitCode).toBe(2);
    expect((err as Error).message).toBe(
      `${dir}: locked by another skillopt run (pid ${process.pid} on ${hostname()}, started ${info.started_at}: npx skillopt eval --config x.yaml; lock file ${join(dir, LOCK_FILE)}) — wait for it to finish or use a new env.out_root`,
    );
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    acquireRunLock(dir).release();
    expect(readdirSync(dir)).toEqual([]);
  });

  test('a folder the lock created is removed at release when the run wrote nothing, kept when it did', () => {
    const parent = tmp();
    const empty = join(parent, 'a', 'b');
    acquireRunLock(empty).release();
    expect(existsSync(empty)).toBe(false);
    const used = join(parent, 'c');
    const lock = acquireRunLock(used);
    writeFileSync(join(used, 'results.jsonl'), '');
    lock.release();
    expect(readdirSync(used)).toEqual(['results.jsonl']);
  });

  test('a stale lock (its pid is gone) is taken over, and says so', async () => {
    const dir = tmp();
    const pid = await deadPid();
    staleLock(dir, pid);
    const lines: string[] = [];
    const lock = acquireRunLock(dir, { log: (l) => lines.push(l) });
    expect(lines).toEqual([
      `taking over the stale lock of ${dir}: pid ${pid} (started 2020-01-01T00:00:00.000Z) is gone`,
    ]);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  test.runIf(existsSync('/proc/self/stat'))('a lock whose pid now belongs to a later process is stale too', () => {
    const dir = tmp();
    staleLock(dir, process.pid, { proc_start: '1' });
    const lock = acquireRunLock(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).token).toBe(lock.info.token);
    lock.release();
  });

  test("another host's lock is never taken over", async () => {
    const dir = tmp();
    staleLock(dir, await deadPid(), { host: 'elsewhere.example' });
    expect(() => acquireRunLock(dir)).toThrow(
      /locked by another skillopt run \(pid \d+ on elsewhere\.example, .*; if that run is gone, delete .*run\.lock$/,
    );
  });

  test('a file that is not a lock is named', () => {
    const dir = tmp();
    writeFileSync(join(dir, LOCK_FILE), 'hello');
    expect(() => acquireRunLock(dir)).toThrow(
      /the lock file .*run\.lock is not a skillopt lock; delete it if no skillopt run uses this folder/,
    );
  });
});

describe('run lock, across processes', () => {
  test('eight processes race for one stale lock: exactly one takes it, the others name it as held', async () => {
    const dir = tmp();
    staleLock(dir, await deadPid());
    const racers = Array.from({ length: 8 }, () => contender(dir));
    const lines = await Promise.all(racers.map((r) => r.line));
    const winners = lines.filter((l) => l === 'ACQUIRED');
    expect(winners, lines.join('\n')).toHaveLength(1);
    const winner = racers[lines.indexOf('ACQUIRED')]!.child;
    for (const l of lines.filter((x) => x !== 'ACQUIRED'))
      expect(l).toMatch(new RegExp(`^HELD .*: locked by another skillopt run \\(pid ${winner.pid} on `));
    // no takeover file is left behind; the lock is the winner's
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(winner.pid);
    const exited = new Promise((r) => winner.on('exit', r));
    winner.stdin!.end();
    await exited;
    expect(readdirSync(dir)).toEqual([]); // released on exit
  });

  test('SIGTERM: the lock is released and the process still dies of the signal', async () => {
    const dir = tmp();
    const { child, line } = contender(dir);
    expect(await line).toBe('ACQUIRED');
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      child.on('exit', (code, signal) => r({ code, signal })),
    );
    child.kill('SIGTERM');
    expect(await exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(readdirSync(dir)).toEqual([]);
  });
});
