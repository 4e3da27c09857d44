/** Scorer throughput: each bench scores one typical answer. */
import { benchmark } from './benchmark.ts';
import { z } from 'zod';
import { exactMatch, includesAll, jsonSchema, label, numeric, regex, weighted } from '../../src/suite/scorers/index.ts';
import type { ScoreContext } from '../../src/suite/scorers/types.ts';

const labels = [
  'null-reference',
  'disposed-object',
  'collection-modified',
  'sync-over-async-deadlock',
  'async-void',
  'integer-overflow',
];
const ctx = <E>(expected: E, output: string): ScoreContext<E> => ({
  task: { id: 't1', input: 'Unhandled ObjectDisposedException in OrderService', expected },
  output,
  messages: [],
  judge: async () => ({ reasoning: '', score: 1, pass: true }),
});
const answer =
  'Root cause: disposed-object. The DbContext is used after its using block ends; keep it alive or await inside the using.';
const Triage = z.object({ team: z.enum(['auth', 'billing', 'infra']), priority: z.enum(['p1', 'p2', 'p3']) });

const s = {
  exact: exactMatch(),
  includes: includesAll(['using', 'await', 'DbContext']),
  re: regex(/disposed-object/),
  lab: label({ labels }),
  num: numeric({ tolerance: 0.01 }),
  json: jsonSchema(Triage),
  mix: weighted([
    { scorer: label({ labels }), weight: 0.7 },
    { scorer: includesAll(['using', 'await']), weight: 0.3 },
  ]),
};
benchmark('scorers: one typical answer each', (bench) => {
  bench.add('exactMatch', () => void s.exact.score(ctx('disposed-object', ' Disposed-Object. ')));
  bench.add('includesAll', () => void s.includes.score(ctx('x', answer)));
  bench.add('regex', () => void s.re.score(ctx('x', answer)));
  bench.add('label', () => void s.lab.score(ctx('disposed-object', answer)));
  bench.add('numeric', () => void s.num.score(ctx(1234.5, 'The total is 1,234.50 USD')));
  bench.add(
    'jsonSchema (fields)',
    () => void s.json.score(ctx({ team: 'auth', priority: 'p2' }, 'Here: {"team":"auth","priority":"p1"}')),
  );
  bench.add('weighted(label, includesAll)', async () => void (await s.mix.score(ctx('disposed-object', answer))));
});
