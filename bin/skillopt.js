#!/usr/bin/env node
// Thin launcher for the compiled CLI (built by `npm run build`, which `npm ci` runs through `prepare`).
import module from 'node:module';

// Node ≥ 22.1 caches compiled modules on disk; Node 20 has no such cache.
module.enableCompileCache?.();
const argv = process.argv.slice(2);
const prestart = await import('../dist/vitest/prestart.js');
// A command that runs suites starts its Vitest worker thread first, to boot while this thread loads the rest.
if (prestart.runsSuites(argv)) prestart.prestartWarmThread();
const { main, reportFatal } = await import('../dist/cli/main.js');

// main prints an error as one line itself and returns its exit code; reportFatal is for anything else.
main(argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.exitCode = reportFatal(err);
  },
);
