/**
 * `skillopt cache stats|prune`: what the model-call cache holds and how it served recent runs, and keeping
 * it bounded. The folder is `--dir`, else the config's `cache.dir` (`--config`, SKILLOPT_CONFIG,
 * SKILLOPT_CACHE_DIR), else `.skillopt/cache`.
 */
import { resolve } from 'node:path';
import { cacheStats, formatBytes, parseAge, parseSize, pruneCache } from '../../model/cache/admin.ts';
import { describeHolder } from '../../util/lock.ts';
import { SkillOptError } from '../../util/errors.ts';
import { displayPath } from '../../util/paths.ts';
import { defineCommand, helpText, noOperands, parseFlags, type FlagValues } from '../args.ts';
import { configFromArgs, CONFIG_FLAGS } from '../common.ts';
import type { Command } from '../command.ts';
import { printOut } from '../../util/print.ts';

const SPEC = defineCommand({
  name: 'cache',
  operands: 'stats|prune',
  flags: {
    dir: {
      type: 'string',
      arg: 'D',
      help: 'the cache folder (default: cache.dir of --config / SKILLOPT_CONFIG, SKILLOPT_CACHE_DIR, else .skillopt/cache)',
    },
    runs: {
      type: 'number',
      arg: 'N',
      default: 10,
      help: 'stats: how many of the most recent runs that used the cache to show',
    },
    json: { type: 'boolean', help: 'stats: print JSON' },
    'max-size': {
      type: 'string',
      arg: '500MB',
      help: 'prune: then remove the least recently used until the cache takes at most this on disk (K/M/G are powers of 1024)',
    },
    'older-than': {
      type: 'string',
      arg: '30d',
      help: 'prune: remove entries unused for longer than this (30d, 12h, 2w)',
    },
    'dry-run': { type: 'boolean', help: 'prune: say what would be removed, remove nothing' },
    config: CONFIG_FLAGS.config,
    'cfg-options': CONFIG_FLAGS['cfg-options'],
    'model-cache': CONFIG_FLAGS['model-cache'],
  },
  about: `  stats   entries, size on disk, and the hit rate of the last N runs that used the cache
  prune   remove entries unused for longer than --older-than, then the least recently used until the cache
          takes at most --max-size on disk; refuses while a run uses the cache, naming it`,
});

type CacheFlags = FlagValues<typeof SPEC.flags>;

function cacheDir(args: CacheFlags): string {
  const dir = args.dir;
  if (dir) return resolve(dir);
  return resolve(configFromArgs(args, { required: false }).config.cache.dir);
}

function pct(x: number | null): string {
  return x === null ? '—' : `${(x * 100).toFixed(1)}%`;
}

export const command: Command = {
  usage: helpText(SPEC),
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub !== 'stats' && sub !== 'prune')
      throw new SkillOptError(
        `skillopt cache: expected 'stats' or 'prune'${sub ? `, got '${sub}'` : ''} (see skillopt cache --help)`,
      );
    const { values: args, positionals } = parseFlags({ ...SPEC, name: `cache ${sub}` }, rest);
    noOperands({ ...SPEC, name: `cache ${sub}` }, positionals);
    const dir = cacheDir(args);
    const out = (line: string) => printOut(line);

    if (sub === 'stats') {
      const s = cacheStats(dir, { runs: args.runs });
      if (args.json) {
        out(JSON.stringify(s, null, 2));
        return 0;
      }
      out(`skillopt cache · ${displayPath(dir)}`);
      out(`  entries:  ${s.entries}`);
      out(`  size:     ${formatBytes(s.disk)} on disk (${formatBytes(s.bytes)} of data)`);
      if (s.oldest_use) out(`  used:     ${s.oldest_use} … ${s.newest_use} (least … most recent)`);
      if (s.stale_temps) out(`  temps:    ${s.stale_temps} left by killed writers (prune removes them)`);
      if (s.recent_runs.length === 0) {
        out('  runs:     none recorded yet');
        return 0;
      }
      const hits = s.recent_runs.reduce((a, r) => a + r.hits, 0);
      const misses = s.recent_runs.reduce((a, r) => a + r.misses, 0);
      out(
        `  runs:     hit rate ${pct(s.recent_hit_rate)} over the last ${s.recent_runs.length} (${hits} hits, ${misses} misses)`,
      );
      for (const r of s.recent_runs) {
        const rate = r.hits + r.misses ? r.hits / (r.hits + r.misses) : null;
        out(
          `    ${r.time.replace('T', ' ').slice(0, 19)}  ${r.command.padEnd(15)} ${r.mode.padEnd(6)} ${String(r.hits).padStart(7)} hits ${String(r.misses).padStart(7)} misses  ${pct(rate)}`,
        );
      }
      return 0;
    }

    const maxSize = args['max-size'];
    const olderThan = args['older-than'];
    if (maxSize === undefined && olderThan === undefined)
      throw new SkillOptError('skillopt cache prune: give --max-size (e.g. 500MB) and/or --older-than (e.g. 30d)');
    const dryRun = args['dry-run'];
    const r = pruneCache(dir, {
      ...(maxSize !== undefined ? { maxBytes: parseSize(maxSize) } : {}),
      ...(olderThan !== undefined ? { olderThanMs: parseAge(olderThan) } : {}),
      dryRun,
    });
    out(
      `skillopt cache prune · ${displayPath(dir)}${dryRun ? ' (dry run: nothing removed)' : ''}\n` +
        `  ${dryRun ? 'would remove' : 'removed'}: ${r.removed} entries (${formatBytes(r.removed_disk)} on disk)` +
        (r.temps_removed ? ` and ${r.temps_removed} stale temp files` : '') +
        `\n  kept:     ${r.kept} entries (${formatBytes(r.kept_disk)} on disk)` +
        (r.in_use.length
          ? `\n  in use:   by ${r.in_use.length} running run(s) (${describeHolder(r.in_use[0]!)}): prune refuses until they finish`
          : ''),
    );
    return 0;
  },
};
