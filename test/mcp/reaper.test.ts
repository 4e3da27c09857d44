/**
 * The reaper (src/mcp/reaper.ts): a server process a suite started and did not stop is killed when the
 * session host closes (here: the watcher of this thread's channel), and one it stopped is left alone.
 */
import { spawn } from 'node:child_process';
import { expect, test } from 'vitest';
import { trackedServers, trackServer, watchMcpServers } from '../../src/mcp/reaper.ts';

const sleeper = () => spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
const exited = (c: ReturnType<typeof sleeper>) =>
  new Promise<NodeJS.Signals | null>((r) => c.once('exit', (_code, signal) => r(signal)));

test('servers still running when the host closes are killed; a stopped one is forgotten', async () => {
  const watcher = watchMcpServers();
  const left = sleeper();
  const stopped = sleeper();
  await Promise.all([left, stopped].map((c) => new Promise((r) => c.once('spawn', r))));
  trackServer(left.pid!);
  trackServer(stopped.pid!).stopped();
  expect(trackedServers()).toContain(left.pid);
  expect(trackedServers()).not.toContain(stopped.pid);
  const leftExit = exited(left);
  watcher.close();
  expect(await leftExit).toBe('SIGKILL');
  expect(stopped.exitCode).toBeNull();
  stopped.kill();
  await exited(stopped);
  expect(trackedServers()).toEqual([]);
});
