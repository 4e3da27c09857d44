#!/usr/bin/env node
// The plain-Node floor of scripts/bench-throughput.mjs: the same tasks against the same server through the
// openai SDK (its defaults), at most --concurrency requests in flight, each answer checked by exact match.
// No Vitest, no config, no files written: what any eval runner must at least pay.
//
//   node scripts/floor.mjs --base-url http://127.0.0.1:PORT/v1 --model M --tasks tasks.json --skill skill.md [--concurrency 32]
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

const arg = (name, dflt) =>
  process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : dflt;
const tasks = JSON.parse(readFileSync(arg('tasks'), 'utf8'));
const skill = readFileSync(arg('skill'), 'utf8');
const client = new OpenAI({ baseURL: arg('base-url'), apiKey: 'floor', maxRetries: 0 });
let free = Number(arg('concurrency', 32));
const waiting = [];
const slot = () => (free > 0 ? (free--, Promise.resolve()) : new Promise((r) => waiting.push(r)));
const release = () => (waiting.length ? waiting.shift()() : free++);
const run = async (t) => {
  await slot();
  try {
    const c = await client.chat.completions.create({
      model: arg('model'),
      max_tokens: 8000,
      messages: [
        { role: 'system', content: skill },
        { role: 'user', content: t.input },
      ],
    });
    return c.choices[0].message.content.trim() === t.expected;
  } finally {
    release();
  }
};
const passed = (await Promise.all(tasks.map(run))).filter(Boolean).length;
console.log(`floor: ${passed}/${tasks.length} passed`);
