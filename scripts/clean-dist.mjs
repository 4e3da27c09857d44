#!/usr/bin/env node
// The first step of `npm run build`: dist/ is emptied, so every file in it is compiled from src/ by this build.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
