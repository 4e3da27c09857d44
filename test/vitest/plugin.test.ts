/** How many cases the plugin keeps in flight for a session's roles (its `maxConcurrency` default). */
import { expect, test } from 'vitest';
import { casesInFlight } from '../../src/vitest/plugin.ts';

const session = (workers: number, target: number, judge: number) =>
  ({
    config: { env: { workers } },
    roles: { target: { concurrency: target }, judge: { concurrency: judge } },
  }) as unknown as Parameters<typeof casesInFlight>[0];

test('a quarter more cases than env.workers when no role may have more requests in flight, else env.workers', () => {
  expect(casesInFlight(session(32, 32, 8))).toBe(40);
  expect(casesInFlight(session(8, 8, 8))).toBe(10);
  expect(casesInFlight(session(1, 1, 1))).toBe(2);
  // a role allowed more requests than env.workers would get more: the cases stay at env.workers
  expect(casesInFlight(session(1, 8, 8))).toBe(1);
  expect(casesInFlight(session(32, 32, 64))).toBe(32);
  expect(casesInFlight(session(0, 8, 8))).toBe(1);
});
