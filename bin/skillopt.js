#!/usr/bin/env node
// Thin launcher for the compiled CLI (built by `npm run build`, which `npm ci` runs through `prepare`).
import { main, reportFatal } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.exitCode = reportFatal(err);
  },
);
