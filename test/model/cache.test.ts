/**
 * The model-call cache at the client: what a key is made of, the four modes, errors never cached, the
 * structured-output negotiation replayed with zero requests, corrupt entries, and stats / prune. Real
 * loopback servers (test/helpers/fault-server.ts) and a real folder; nothing is mocked.
 */
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { Accounting } from '../../src/model/accounting.ts';
import { cacheStats, parseAge, parseSize, pruneCache } from '../../src/model/cache/admin.ts';
import { CacheMissError, ModelCache, isCacheMiss, openModelCache } from '../../src/model/cache/cache.ts';
import { endpointIdentity, urlIdentity } from '../../src/model/cache/key.ts';
import { createModelClient, type ModelClient } from '../../src/model/client.ts';
import type { RoleConfig } from '../../src/model/types.ts';
import { RankingSchema } from '../../src/protocol/schemas.ts';
import { defaultConfig } from '../../src/config/schema.ts';
import { loadConfig } from '../../src/config/load.ts';
import { parseFlags } from '../../src/cli/args.ts';
import { configFromArgs, CONFIG_FLAGS } from '../../src/cli/common.ts';
import { startFaultServer, type FaultServer, type FaultServerOptions, type Script } from '../helpers/fault-server.ts';
import { roleConfig, user } from './harness.ts';

const dirs: string[] = [];
const servers: FaultServer[] = [];
const clients: ModelClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of servers) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'skillopt-cache-'));
  dirs.push(d);
  return d;
}

const SIM = { seed: 0, noise: 0, max_rules: 0, analyst_error_rate: 0 };

function cacheIn(dir: string, mode: 'rw' | 'ro' | 'replay' = 'rw', logs: string[] = []): ModelCache {
  return new ModelCache({ dir, mode, sim: SIM, log: (l) => logs.push(l) });
}

async function server(script: Script, options?: FaultServerOptions): Promise<FaultServer> {
  const s = await startFaultServer(script, options);
  servers.push(s);
  return s;
}

function client(
  role: RoleConfig,
  cache: ModelCache | null,
  logs: string[] = [],
): { client: ModelClient; accounting: Accounting } {
  const accounting = new Accounting();
  const c = createModelClient(role, {
    accounting,
    cache,
    env: {},
    log: (l) => logs.push(l),
    sleep: async () => {},
    random: () => 0.5,
  });
  clients.push(c);
  return { client: c, accounting };
}

/** Every entry file under a cache folder. */
function entryFiles(dir: string): string[] {
  const root = join(dir, 'v1');
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((shard) => readdirSync(join(root, shard)).map((n) => join(root, shard, n)));
}

describe('configuration', () => {
  it('cache.mode defaults to rw in .skillopt/cache; SKILLOPT_CACHE beats the config, --model-cache beats both', () => {
    expect(defaultConfig().cache).toEqual({ mode: 'rw', dir: '.skillopt/cache' });
    expect(loadConfig({ env: { SKILLOPT_CACHE: 'replay', SKILLOPT_CACHE_DIR: '/tmp/x' } }).config.cache).toEqual({
      mode: 'replay',
      dir: '/tmp/x',
    });
    expect(loadConfig({ env: { SKILLOPT_CACHE: 'replay' }, cfgOptions: ['cache.mode=ro'] }).config.cache.mode).toBe(
      'ro',
    );
    expect(loadConfig({ env: {}, cfgOptions: ['cache.mode=read-only'] }).config.cache.mode).toBe('ro');
    const args = (argv: string[]) => parseFlags({ name: 'test', flags: CONFIG_FLAGS }, argv).values;
    expect(
      configFromArgs(args(['--model-cache', 'off', '--cfg-options', 'cache.mode=replay']), { required: false }).config
        .cache.mode,
    ).toBe('off');
    expect(() => configFromArgs(args(['--model-cache', 'maybe']), { required: false })).toThrow(
      '--model-cache maybe: expected one of rw, ro, off, replay',
    );
    expect(openModelCache({ ...defaultConfig(), cache: { mode: 'off', dir: 'x' } })).toBeNull();
  });
});

describe('the key', () => {
  const sim = (over: Partial<RoleConfig> = {}) =>
    roleConfig('http://127.0.0.1:41234/v1', { backend: 'simulated', ...over });
  const keyOf = (c: ModelCache, role: RoleConfig, request: unknown = { messages: user('q') }) =>
    c.key(role, 'chat', request);

  it('the in-process simulated model: its knobs, not its port', () => {
    const dir = tempDir();
    const a = new ModelCache({ dir, mode: 'rw', sim: SIM });
    expect(keyOf(a, sim())).toBe(keyOf(a, sim({ baseURL: 'http://127.0.0.1:50505/v1' })));
    // every knob of model.simulated counts, including one added after this cache was written
    const changes: Array<Record<string, number>> = [
      { seed: 1 },
      { noise: 0.1 },
      { max_rules: 5 },
      { analyst_error_rate: 0.2 },
      { a_later_knob: 0.5 },
    ];
    for (const knob of changes) {
      const other = new ModelCache({ dir, mode: 'rw', sim: { ...SIM, ...knob } });
      expect(keyOf(other, sim())).not.toBe(keyOf(a, sim()));
    }
    // latency_ms is not a knob of the replies: openModelCache leaves it out
    const cfg = defaultConfig();
    const slow = { ...cfg, model: { ...cfg.model, simulated: { ...cfg.model.simulated, latency_ms: 50 } } };
    expect(keyOf(openModelCache(slow)!, sim())).toBe(keyOf(openModelCache(cfg)!, sim()));
    const knobs = { ...cfg, model: { ...cfg.model, simulated: { ...cfg.model.simulated, seed: 3 } } };
    expect(keyOf(openModelCache(knobs)!, sim())).not.toBe(keyOf(openModelCache(cfg)!, sim()));
  });

  it('simulated and real endpoints never share a key, nor do two real ones', () => {
    const c = new ModelCache({ dir: tempDir(), mode: 'rw', sim: SIM });
    const real = roleConfig('http://127.0.0.1:41234/v1');
    expect(keyOf(c, real)).not.toBe(keyOf(c, sim()));
    expect(keyOf(c, real)).not.toBe(keyOf(c, roleConfig('http://127.0.0.1:41235/v1')));
    expect(keyOf(c, real)).not.toBe(keyOf(c, roleConfig('http://127.0.0.1:41234/v1', { model: 'other' })));
    expect(keyOf(c, real)).not.toBe(keyOf(c, roleConfig('http://127.0.0.1:41234/v1', { backend: 'openai_chat' })));
  });

  it('a real endpoint is its base URL without credentials', () => {
    expect(urlIdentity('https://user:s3cret-pass@models.example/v1/?api-key=k')).toBe('https://models.example/v1');
    const c = new ModelCache({ dir: tempDir(), mode: 'rw', sim: SIM });
    expect(keyOf(c, roleConfig('https://a:b@h.example/v1'))).toBe(keyOf(c, roleConfig('https://h.example/v1/')));
    expect(JSON.stringify(endpointIdentity(roleConfig('https://a:b@h.example/v1'), null))).not.toContain('b@');
  });

  it('the request: messages, sampling parameters and the trial seed all count', () => {
    const c = new ModelCache({ dir: tempDir(), mode: 'rw', sim: SIM });
    const r = roleConfig('http://127.0.0.1:1/v1');
    const base = { messages: user('q'), max_tokens: 512 };
    const k = keyOf(c, r, base);
    expect(keyOf(c, r, { ...base })).toBe(k);
    expect(keyOf(c, r, { ...base, messages: user('q2') })).not.toBe(k);
    expect(keyOf(c, r, { ...base, max_tokens: 256 })).not.toBe(k);
    expect(keyOf(c, r, { ...base, temperature: 0.7 })).not.toBe(k);
    expect(keyOf(c, r, { ...base, seed: 1 })).not.toBe(keyOf(c, r, { ...base, seed: 0 }));
    expect(c.key(r, 'structured', base)).not.toBe(k);
  });
});

describe('chat through the cache', () => {
  it('rw: the first call is sent and stored, the same call again sends nothing and spends nothing', async () => {
    const srv = await server([{ content: 'network', usage: { prompt_tokens: 20, completion_tokens: 2 } }]);
    const dir = tempDir();
    const cache = cacheIn(dir);
    const { client: c, accounting } = client(roleConfig(srv.baseURL), cache);
    const first = await c.chat(user('ECONNRESET while pulling'), { stage: 'rollout' });
    expect(first).toMatchObject({
      text: 'network',
      cache: 'miss',
      attempts: 1,
      usage: { prompt_tokens: 20, completion_tokens: 2 },
    });
    const again = await c.chat(user('ECONNRESET while pulling'), { stage: 'rollout' });
    // a hit restores the usage its reply reported (measured), and sends nothing (spent: the accounting below)
    expect(again).toMatchObject({
      text: 'network',
      cache: 'hit',
      attempts: 0,
      usage: { prompt_tokens: 20, completion_tokens: 2 },
      finishReason: 'stop',
    });
    expect(srv.chatRequests).toHaveLength(1);
    expect(accounting.snapshot()['rollout']).toMatchObject({ calls: 1, attempts: 1, prompt_tokens: 20 });
    expect(cache.summary()).toMatchObject({
      hits: 1,
      misses: 1,
      writes: 1,
      by_role: { target: { hits: 1, misses: 1 } },
      by_stage: { rollout: { hits: 1, misses: 1 } },
    });
    // a fresh process (a new cache object on the same folder, a new client) is served too
    const { client: later } = client(roleConfig(srv.baseURL), cacheIn(dir));
    expect((await later.chat(user('ECONNRESET while pulling'), { stage: 'rollout' })).cache).toBe('hit');
    expect(srv.chatRequests).toHaveLength(1);
    // another trial (the request's seed) is another sample
    expect((await later.chat(user('ECONNRESET while pulling'), { stage: 'rollout', seed: 1 })).cache).toBe('miss');
    expect(srv.chatRequests).toHaveLength(2);
  });

  it('errors are never cached: a failed call is asked again, and only its success is stored', async () => {
    const srv = await server([{ status: 400, body: { error: { message: 'bad' } } }, { content: 'disk' }]);
    const dir = tempDir();
    const { client: c } = client(roleConfig(srv.baseURL, { retries: 0 }), cacheIn(dir));
    await expect(c.chat(user('ENOSPC'), { stage: 'rollout' })).rejects.toMatchObject({ kind: 'bad_request' });
    expect(entryFiles(dir)).toHaveLength(0);
    expect((await c.chat(user('ENOSPC'), { stage: 'rollout' })).text).toBe('disk');
    expect(entryFiles(dir)).toHaveLength(1);
    expect((await c.chat(user('ENOSPC'), { stage: 'rollout' })).cache).toBe('hit');
    expect(srv.chatRequests).toHaveLength(2);
  });

  it('ro reads and never writes; replay never sends a request and names the role and stage of a miss', async () => {
    const srv = await server([], { fallback: { content: 'auth' } });
    const dir = tempDir();
    const { client: ro } = client(roleConfig(srv.baseURL), cacheIn(dir, 'ro'));
    expect((await ro.chat(user('HTTP401'), { stage: 'rollout' })).cache).toBe('miss');
    expect((await ro.chat(user('HTTP401'), { stage: 'rollout' })).cache).toBe('miss');
    expect(srv.chatRequests).toHaveLength(2);
    expect(entryFiles(dir)).toHaveLength(0);

    const { client: replay } = client(roleConfig(srv.baseURL), cacheIn(dir, 'replay'));
    const err = await replay.chat(user('HTTP401'), { stage: 'rollout' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CacheMissError);
    expect(isCacheMiss(err)).toBe(true);
    expect((err as CacheMissError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(
      /^no cached reply for the target call \(stage rollout, mitko at http:\/\/127\.0\.0\.1:\d+\/v1\) in .+; --model-cache replay sends no request$/,
    );
    expect(srv.chatRequests).toHaveLength(2);

    // filled by rw, replay serves it without a request
    const { client: rw } = client(roleConfig(srv.baseURL), cacheIn(dir, 'rw'));
    await rw.chat(user('HTTP401'), { stage: 'rollout' });
    expect((await replay.chat(user('HTTP401'), { stage: 'rollout' })).text).toBe('auth');
    expect(srv.chatRequests).toHaveLength(3);
  });

  it('a corrupt entry is a miss with a warning, never a crash; rw writes it anew', async () => {
    const srv = await server([], { fallback: { content: 'memory' } });
    const dir = tempDir();
    const { client: c } = client(roleConfig(srv.baseURL), cacheIn(dir));
    await c.chat(user('HeapExhausted'), { stage: 'rollout' });
    const [file] = entryFiles(dir);
    for (const garbage of ['{"v":1,"key":"trunc', '', '{"v":1,"key":"another","kind":"chat","value":{}}', '{"v":1}']) {
      writeFileSync(file!, garbage);
      const logs: string[] = [];
      const { client: fresh } = client(roleConfig(srv.baseURL), cacheIn(dir, 'rw', logs));
      const r = await fresh.chat(user('HeapExhausted'), { stage: 'rollout' });
      expect(r).toMatchObject({ text: 'memory', cache: 'miss' });
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatch(/^warning: model cache: .+\.json is corrupt \(.+\); treated as a miss and rewritten$/);
      expect(JSON.parse(readFileSync(file!, 'utf8')).value.text).toBe('memory');
    }
    // a value that does not decode (not a chat reply) is corrupt too, even in an entry without a checksum
    const { sum: _sum, ...entry } = JSON.parse(readFileSync(file!, 'utf8'));
    writeFileSync(file!, JSON.stringify({ ...entry, value: { text: 42 } }));
    const logs: string[] = [];
    const { client: replay } = client(roleConfig(srv.baseURL), cacheIn(dir, 'replay', logs));
    const err = await replay.chat(user('HeapExhausted'), { stage: 'rollout' }).catch((e: unknown) => e);
    expect((err as Error).message).toContain(`(its entry ${file} is corrupt: its value does not decode)`);
    expect(logs[0]).toContain('treated as a miss');
  });

  it('entries carry a checksum of their content: an edited entry is corrupt (a miss; an error in replay naming it); an entry without one is valid and gains it on a rw hit', async () => {
    const srv = await server([], { fallback: { content: 'disk' } });
    const dir = tempDir();
    await client(roleConfig(srv.baseURL), cacheIn(dir)).client.chat(user('DiskFull'), { stage: 'rollout' });
    const [file] = entryFiles(dir);
    const written = readFileSync(file!, 'utf8');
    const { sum, ...content } = JSON.parse(written);
    expect(sum).toMatch(/^[0-9a-f]{64}$/);
    expect(createHash('sha256').update(JSON.stringify(content)).digest('hex')).toBe(sum);
    const ask = async (mode: 'rw' | 'ro' | 'replay', logs: string[] = []) =>
      client(roleConfig(srv.baseURL), cacheIn(dir, mode, logs)).client.chat(user('DiskFull'), { stage: 'rollout' });

    // edited to other valid JSON, checksum kept: replay refuses it, naming the entry; rw asks again and rewrites it
    writeFileSync(file!, written.replace('"text":"disk"', '"text":"network"'));
    const logs: string[] = [];
    const err = await ask('replay', logs).catch((e: unknown) => e);
    expect(isCacheMiss(err)).toBe(true);
    expect((err as Error).message).toContain(
      `(its entry ${file} is corrupt: its checksum does not match its content: the entry was changed after it was written)`,
    );
    expect(logs).toEqual([
      expect.stringMatching(
        /^warning: model cache: .+\.json is corrupt \(its checksum does not match .+\); treated as a miss$/,
      ),
    ]);
    const served = srv.requests.length;
    expect(await ask('rw')).toMatchObject({ text: 'disk', cache: 'miss' });
    expect(srv.requests.length).toBe(served + 1);
    const rewritten = JSON.parse(readFileSync(file!, 'utf8'));
    expect(rewritten.value.text).toBe('disk');
    const { sum: newSum, ...newContent } = rewritten;
    expect(createHash('sha256').update(JSON.stringify(newContent)).digest('hex')).toBe(newSum);

    // written before checksums (no `sum`): replay and ro serve it as it is; a rw hit writes it again with its checksum
    const legacy = JSON.stringify({ ...content, value: { ...content.value, text: 'legacy disk' } });
    writeFileSync(file!, legacy);
    expect(await ask('replay')).toMatchObject({ text: 'legacy disk', cache: 'hit' });
    expect(await ask('ro')).toMatchObject({ text: 'legacy disk', cache: 'hit' });
    expect(readFileSync(file!, 'utf8')).toBe(legacy);
    expect(await ask('rw')).toMatchObject({ text: 'legacy disk', cache: 'hit' });
    const sealed = JSON.parse(readFileSync(file!, 'utf8'));
    expect(sealed.sum).toMatch(/^[0-9a-f]{64}$/);
    const { sum: _s, ...rest } = sealed;
    expect(rest).toEqual(JSON.parse(legacy));
    expect(await ask('replay')).toMatchObject({ text: 'legacy disk', cache: 'hit' });
    expect(srv.requests.length).toBe(served + 1);
  });

  it('a folder it cannot write to is one warning, and the calls go on', async () => {
    const srv = await server([], { fallback: { content: 'config' } });
    const dir = tempDir();
    writeFileSync(join(dir, 'v1'), 'a file where the store folder should be');
    const logs: string[] = [];
    const { client: c } = client(roleConfig(srv.baseURL), cacheIn(dir, 'rw', logs));
    expect((await c.chat(user('a'), { stage: 'rollout' })).text).toBe('config');
    expect((await c.chat(user('b'), { stage: 'rollout' })).text).toBe('config');
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/^warning: model cache: cannot write to .+; this run's replies are not cached$/);
  });
});

describe('structured calls through the cache', () => {
  const ranking = JSON.stringify({ reasoning: 'by support', selected_indices: [2, 0] });

  it('keyed on the logical request: a rerun makes zero requests even where the endpoint needed a fallback', async () => {
    const srv = await server([{ content: ranking }], { rejectResponseFormat: 'json_schema' });
    const dir = tempDir();
    const role = roleConfig(srv.baseURL, { role: 'optimizer' });
    const { client: first } = client(role, cacheIn(dir));
    const a = await first.structured('ranking', RankingSchema, user('# SkillOpt stage: ranking'));
    expect(a).toMatchObject({ mode: 'json_object', attempts: 2, cache: 'miss' });
    expect(srv.chatRequests.map((q) => q.body.response_format?.type)).toEqual(['json_schema', 'json_object']);
    // a new client (a rerun: it starts again from json_schema) asks nothing
    const { client: rerun, accounting } = client(role, cacheIn(dir, 'replay'));
    const b = await rerun.structured('ranking', RankingSchema, user('# SkillOpt stage: ranking'));
    expect(b).toMatchObject({
      value: a.value,
      raw: a.raw,
      mode: 'json_object',
      reasked: false,
      attempts: 0,
      cache: 'hit',
      usage: a.usage,
    });
    expect(srv.chatRequests).toHaveLength(2);
    expect(accounting.snapshot()['_total']).toMatchObject({ calls: 0, attempts: 0 });
  });

  it("a re-asked reply is cached as the call's outcome; a reply that stayed invalid is not cached", async () => {
    const srv = await server([
      { content: 'no json here' },
      { content: ranking },
      { content: 'nope' },
      { content: 'still nope' },
    ]);
    const dir = tempDir();
    const role = roleConfig(srv.baseURL, { role: 'optimizer' });
    const { client: c } = client(role, cacheIn(dir));
    const a = await c.structured('ranking', RankingSchema, user('x'));
    expect(a).toMatchObject({ reasked: true, attempts: 2, cache: 'miss' });
    expect(await c.structured('ranking', RankingSchema, user('x'))).toMatchObject({
      reasked: true,
      value: a.value,
      attempts: 0,
      cache: 'hit',
    });
    await expect(c.structured('ranking', RankingSchema, user('y'))).rejects.toMatchObject({ name: 'ModelOutputError' });
    expect(entryFiles(dir)).toHaveLength(1);
    expect(srv.chatRequests).toHaveLength(4);
  });

  it('the schema and the structured_output policy are part of the logical request', async () => {
    const srv = await server([], { fallback: { content: ranking } });
    const dir = tempDir();
    const { client: auto } = client(roleConfig(srv.baseURL, { role: 'optimizer' }), cacheIn(dir));
    await auto.structured('ranking', RankingSchema, user('x'));
    const { client: pinned } = client(
      roleConfig(srv.baseURL, { role: 'optimizer', structuredOutput: 'json_object' }),
      cacheIn(dir),
    );
    expect((await pinned.structured('ranking', RankingSchema, user('x'))).cache).toBe('miss');
    expect((await auto.structured('ranking', RankingSchema, user('x'), { stage: 'ranking_step2' })).cache).toBe('hit'); // the accounting stage is not
    expect(srv.chatRequests).toHaveLength(2);
  });
});

describe('stats and prune', () => {
  it('parses sizes and ages', () => {
    expect(parseSize('500MB')).toBe(500 * 1024 ** 2);
    expect(parseSize('1.5g')).toBe(1.5 * 1024 ** 3);
    expect(parseSize('800K')).toBe(800 * 1024);
    expect(parseSize('4096')).toBe(4096);
    expect(() => parseSize('lots')).toThrow('--max-size lots: expected a size like 500MB, 2GB or 800K');
    expect(parseAge('30d')).toBe(30 * 86_400_000);
    expect(parseAge('12h')).toBe(12 * 3_600_000);
    expect(parseAge('2w')).toBe(14 * 86_400_000);
    expect(() => parseAge('soon')).toThrow('--older-than soon: expected an age like 30d, 12h, 2w or 90m');
  });

  it('stats counts entries and recent runs; prune goes by last use, then size; stale temp files go', async () => {
    const srv = await server([], { fallback: { content: 'network' } });
    const dir = tempDir();
    const cache = cacheIn(dir);
    const { client: c } = client(roleConfig(srv.baseURL), cache);
    for (let i = 0; i < 10; i++) await c.chat(user(`q${i}`), { stage: 'rollout' });
    await c.chat(user('q0'), { stage: 'rollout' });
    cache.recordRun('eval');
    cache.close(); // the run is over: prune may remove its entries
    const now = Date.now();
    const files = entryFiles(dir).sort();
    // entries 0–3 last used 40 days ago, 4–6 10 days ago, the rest now
    files.forEach((f, i) => {
      const t = new Date(now - (i < 4 ? 40 : i < 7 ? 10 : 0) * 86_400_000);
      utimesSync(f, t, t);
    });
    const temp = join(dirname(files[0]!), '.dead.writer.tmp');
    writeFileSync(temp, '{"partial');
    utimesSync(temp, new Date(now - 2 * 3_600_000), new Date(now - 2 * 3_600_000));

    const s = cacheStats(dir, { now });
    expect(s).toMatchObject({ entries: 10, stale_temps: 1, recent_hit_rate: 1 / 11 });
    expect(s.recent_runs).toEqual([
      expect.objectContaining({ command: 'eval', mode: 'rw', hits: 1, misses: 10, writes: 10 }),
    ]);
    expect(s.disk).toBeGreaterThanOrEqual(s.bytes);

    expect(pruneCache(dir, { olderThanMs: 30 * 86_400_000, dryRun: true, now })).toMatchObject({
      removed: 4,
      kept: 6,
      temps_removed: 1,
    });
    expect(entryFiles(dir).filter((f) => f.endsWith('.json'))).toHaveLength(10);
    expect(pruneCache(dir, { olderThanMs: 30 * 86_400_000, now })).toMatchObject({
      removed: 4,
      kept: 6,
      temps_removed: 1,
    });
    expect(existsSync(temp)).toBe(false);
    const perEntry = cacheStats(dir).disk / 6;
    const r = pruneCache(dir, { maxBytes: Math.floor(perEntry * 3.5), now });
    expect(r).toMatchObject({ removed: 3, kept: 3 });
    expect(r.kept_disk).toBeLessThanOrEqual(perEntry * 3.5);
    // the least recently used went first: what is left is what was used now
    const left = new Set(entryFiles(dir));
    expect(files.slice(7).every((f) => left.has(f))).toBe(true);

    // a read marks an entry used in rw (not in ro): an old entry read again survives an age prune
    const longAgo = new Date(now - 40 * 86_400_000);
    for (const f of left) utimesSync(f, longAgo, longAgo);
    const readAll = async (cache: ModelCache) => {
      const { client: c2 } = client(roleConfig(srv.baseURL), cache);
      for (let i = 0; i < 10; i++) await c2.chat(user(`q${i}`), { stage: 'rollout' });
    };
    await readAll(cacheIn(dir, 'ro'));
    expect([...left].every((f) => Math.abs(statSync(f).mtimeMs - longAgo.getTime()) < 1000)).toBe(true);
    await readAll(cacheIn(dir, 'rw')); // marks the 3 it finds, writes the 7 it misses
    expect([...left].every((f) => statSync(f).mtimeMs > now - 60_000)).toBe(true);
    expect(pruneCache(dir, { olderThanMs: 30 * 86_400_000, dryRun: true })).toMatchObject({ removed: 0, kept: 10 });
  });
});

describe('prune and the runs using the cache', () => {
  it('prune refuses while a run uses the cache, naming it; a dry run counts and names it; a closed or dead user does not count', async () => {
    const srv = await server([], { fallback: { content: 'disk' } });
    const dir = tempDir();
    const cache = cacheIn(dir); // a live user: this very process
    const { client: c } = client(roleConfig(srv.baseURL), cache);
    for (let i = 0; i < 3; i++) await c.chat(user(`q${i}`), { stage: 'rollout' });
    const users = readdirSync(join(dir, 'users'));
    expect(users).toEqual([expect.stringMatching(/^\d+-[0-9a-f]{16}\.json$/)]);
    expect(() => pruneCache(dir, { maxBytes: 0 })).toThrow(
      new RegExp(
        `^skillopt cache prune: .+ is in use by a running skillopt run \\(pid ${process.pid} on .+, started .+: .+\\) — prune once it has finished \\(its entries are the replies it needs\\); if that run is gone, delete .+users/${users[0]}$`,
      ),
    );
    expect(entryFiles(dir)).toHaveLength(3);
    const dry = pruneCache(dir, { maxBytes: 0, dryRun: true });
    expect(dry).toMatchObject({ removed: 3, kept: 0, in_use: [expect.objectContaining({ pid: process.pid })] });
    expect(entryFiles(dir)).toHaveLength(3);

    // a user killed with -9 left its record: its pid is gone, so the record is stale, ignored and removed
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    const stale = join(dir, 'users', `${gone}-0000000000000000.json`);
    writeFileSync(
      stale,
      JSON.stringify({
        ...JSON.parse(readFileSync(join(dir, 'users', users[0]!), 'utf8')),
        pid: gone,
        token: `${gone}-0000000000000000`,
        proc_start: null,
      }),
    );
    cache.close();
    expect(readdirSync(join(dir, 'users'))).toEqual([basename(stale)]);
    expect(pruneCache(dir, { maxBytes: 0 })).toMatchObject({ removed: 3, kept: 0, in_use: [] });
    expect(readdirSync(join(dir, 'users'))).toEqual([]);
  });
});

function dirname(p: string): string {
  return p.slice(0, p.lastIndexOf('/'));
}
