/**
 * The micro-benchmarks' harness: each benchmark is one tinybench `Bench`, run as one test of the Vitest
 * project `bench` (`npm run bench`), which prints tinybench's table (throughput, mean and percentiles of
 * the latency, samples). Nothing is asserted on a timing (docs/performance.md): a benchmark fails only when
 * a task throws.
 */
import { Bench, type BenchOptions } from 'tinybench';
import { test } from 'vitest';

export function benchmark(name: string, define: (bench: Bench) => void, options: BenchOptions = {}): void {
  test(name, async () => {
    const bench = new Bench({ name, time: 500, warmupTime: 100, throws: true, ...options });
    define(bench);
    await bench.run();
    const rows = bench.table().filter((row): row is Record<string, string | number | undefined> => row !== null);
    const columns = Object.keys(rows[0] ?? {});
    const width = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
    const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(width[i]!)).join('  ');
    console.log([name, line(columns), ...rows.map((r) => line(columns.map((c) => String(r[c] ?? ''))))].join('\n'));
  });
}
