/**
 * The unit project's setup file (test/setup/guard.ts), run by a Vitest of its own over fixture files
 * (test/fixtures/guard/*.guard.ts): a file that leaves temp entries or connects beyond loopback fails, naming
 * what it did, as does one whose child process connects out (and swallows the error); a tidy file and one
 * using loopback pass.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { isLoopbackHost } from './guard.ts';

const vitest = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));
const config = fileURLToPath(new URL('../fixtures/guard/vitest.config.ts', import.meta.url));

test('loopback hosts are told from others', () => {
  for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'])
    expect(isLoopbackHost(h), h).toBe(true);
  for (const h of ['192.0.2.1', '0.0.0.0', 'example.com', '10.0.0.1', '::ffff:10.0.0.1', 'localhost.example.com'])
    expect(isLoopbackHost(h), h).toBe(false);
});

test('a file that leaves temp entries or reaches past loopback fails; tidy and loopback-only files pass', () => {
  const run = spawnSync(process.execPath, [vitest, 'run', '--config', config], {
    encoding: 'utf8',
    cwd: fileURLToPath(new URL('../fixtures/guard/', import.meta.url)),
  });
  const report = JSON.parse(run.stdout) as { testResults: Array<{ name: string; status: string; message: string }> };
  const byFile = Object.fromEntries(
    report.testResults.map((r) => [r.name.split('/').pop()!, { status: r.status, message: r.message }]),
  );
  expect(byFile['cleans-temp.guard.ts']).toEqual({ status: 'passed', message: '' });
  expect(byFile['loopback.guard.ts']).toEqual({ status: 'passed', message: '' });
  expect(byFile['leaves-temp.guard.ts']!.status).toBe('failed');
  expect(byFile['leaves-temp.guard.ts']!.message).toMatch(
    /^test guard \(test\/setup\/guard\.ts\): left in the temp directory: left-behind-\w+, stray\.txt$/,
  );
  expect(byFile['connects-out.guard.ts']!.status).toBe('failed');
  expect(byFile['connects-out.guard.ts']!.message).toBe(
    'test guard (test/setup/guard.ts): a connection to 192.0.2.1 is not loopback; tests reach 127.0.0.1 only',
  );
  expect(byFile['child-connects-out.guard.ts']!.status).toBe('failed');
  expect(byFile['child-connects-out.guard.ts']!.message).toMatch(
    /^test guard: blocked a connection to 192\.0\.2\.1:9 from a child process \(node -e\): tests reach loopback only; /,
  );
  expect(byFile['fetches-out.guard.ts']!.status).toBe('failed');
  expect(byFile['fetches-out.guard.ts']!.message).toMatch(
    /^test guard \(test\/setup\/guard\.ts\): a (connection to|DNS lookup of) example\.com is not loopback/,
  );
  expect(run.status).toBe(1);
});
