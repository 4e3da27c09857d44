/**
 * A suite's MCP servers in process (src/mcp/suite.ts), on real servers: @modelcontextprotocol/server-memory
 * and the fault fixture over stdio, and an SDK server over Streamable HTTP on 127.0.0.1.
 * - scope 'case' gives each case a fresh stateful server: nothing one case wrote is seen by the next (and
 *   the same steps with one shared server show that it would be);
 * - a case recorded under `rw` replays with no server: the same results, and a request or a case that was
 *   never recorded is a miss naming the server;
 * - HTTP headers come from environment variables and are masked where the server echoes them;
 * - a skill read from `skill://` resources is checked against the server's digest and frontmatter.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { checkMcpOptions, type McpOptions } from '../../src/mcp/config.ts';
import { McpSuite, relativize, skillFileUri, workspaceForms } from '../../src/mcp/suite.ts';
import { isMcpServerDied } from '../../src/mcp/live.ts';
import type { McpRecorder } from '../../src/mcp/record.ts';
import { isCacheMiss } from '../../src/model/cache/cache.ts';
import type { CacheMode } from '../../src/model/cache/settings.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const MEMORY = join(REPO, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
const FAULT = join(REPO, 'test/fixtures/mcp/fault-server.mjs');
const EXAMPLE = join(REPO, 'examples/mcp-skill-server/server.mjs');

/** The model-call cache's part MCP uses, in memory. */
class MemoryRecorder implements McpRecorder {
  readonly dir = '(memory)';
  readonly entries = new Map<string, Record<string, unknown>>();
  constructor(public mode: CacheMode) {}
  async recall(_stage: string, key: string) {
    const v = this.entries.get(key);
    return v ? { value: structuredClone(v) } : ({ miss: true } as const);
  }
  record(_stage: string, key: string, value: Record<string, unknown>) {
    if (this.mode === 'rw') this.entries.set(key, structuredClone(value));
  }
}

const task = (id: string) => ({ id, input: `case ${id}`, expected: '' });
let dir = '';
const suites: McpSuite[] = [];

function suite(mcp: McpOptions, recorder: McpRecorder | null = null, env?: NodeJS.ProcessEnv): McpSuite {
  const s = new McpSuite({
    suite: 'mcp-test',
    checked: checkMcpOptions('mcp-test', mcp),
    recorder,
    runDir: dir,
    reserved: [],
    toolTimeoutMs: 20_000,
    ...(env ? { env } : {}),
  });
  suites.push(s);
  return s;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-suite-'));
});
afterEach(async () => {
  await Promise.all(suites.splice(0).map((s) => s.close()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('server-memory, a stateful server', () => {
  const ada = { entities: [{ name: 'Ada', entityType: 'person', observations: ['likes tea'] }] };

  test("scope 'case': each case starts an empty graph, whatever the case before it wrote", async () => {
    const s = suite({
      servers: {
        mem: {
          command: process.execPath,
          args: [MEMORY],
          env: { MEMORY_FILE_PATH: { value: '${workspace}/memory.jsonl' } },
          scope: 'case',
        },
      },
      workspace: true,
    });
    const first = await s.openCase(task('a'), undefined);
    await first.clients.mem!.callTool('create_entities', ada);
    expect((await first.clients.mem!.callTool('read_graph')).text).toContain('Ada');
    await s.closeCase(first);
    const second = await s.openCase(task('b'), undefined);
    const graph = await second.clients.mem!.callTool('read_graph');
    expect(graph.ok).toBe(true);
    expect(graph.text).not.toContain('Ada');
    await s.closeCase(second);
  });

  test("the same steps on one shared server (scope 'suite') do leak: the check above can fail", async () => {
    const s = suite({
      servers: {
        mem: {
          command: process.execPath,
          args: [MEMORY],
          env: { MEMORY_FILE_PATH: { value: join(dir, 'shared.jsonl') } },
        },
      },
    });
    const first = await s.openCase(task('a'), undefined);
    await first.clients.mem!.callTool('create_entities', ada);
    await s.closeCase(first);
    const second = await s.openCase(task('b'), undefined);
    expect((await second.clients.mem!.callTool('read_graph')).text).toContain('Ada');
  });
});

describe('record and replay', () => {
  const fault = (command = process.execPath) => ({
    servers: { faulty: { command, args: [FAULT], env: { FAULT: { value: 'none' } } } },
  });

  test('a case recorded under rw replays with no server; an unrecorded request or case is a miss naming the server', async () => {
    const rec = new MemoryRecorder('rw');
    const live = suite(fault(), rec);
    const c = await live.openCase(task('k1'), undefined);
    const tools = c.remoteTools();
    expect(tools.map((t) => [t.spec.name, t.mcp])).toEqual([['lookup', { server: 'faulty', tool: 'lookup' }]]);
    const first = await tools[0]!.call('{"key":"alpha"}', { timeoutMs: 20_000 });
    const unknown = await tools[0]!.call('{"key":"nope"}', { timeoutMs: 20_000 });
    expect(first).toEqual({ ok: true, content: '"alpha" = 11' });
    expect(unknown).toEqual({ ok: false, content: 'error: no value under "nope"' });
    await live.closeCase(c);

    rec.mode = 'replay';
    const replay = suite(fault('/nonexistent/server-binary'), rec);
    const r = await replay.openCase(task('k1'), undefined);
    const again = r.remoteTools()[0]!;
    expect(await again.call('{"key":"alpha"}', { timeoutMs: 20_000 })).toEqual(first);
    expect(await again.call('{"key":"nope"}', { timeoutMs: 20_000 })).toEqual(unknown);
    const miss = await again.call('{"key":"beta"}', { timeoutMs: 20_000 }).catch((e: unknown) => e);
    expect(isCacheMiss(miss)).toBe(true);
    expect((miss as Error).message).toMatch(
      /^no recorded reply of MCP server 'faulty' for tools\/call lookup \(request 3 of case k1\)/,
    );
    const never = await replay.openCase(task('k2'), undefined).catch((e: unknown) => e);
    expect(isCacheMiss(never)).toBe(true);
    expect((never as Error).message).toContain("no recorded reply of MCP server 'faulty' for case k2");
  });

  test("the order matters: the same call after another call of the case is another record (a stateful server's answer may differ)", async () => {
    const rec = new MemoryRecorder('rw');
    const live = suite(fault(), rec);
    const c = await live.openCase(task('k3'), undefined);
    await c.clients.faulty!.callTool('lookup', { key: 'beta' });
    await live.closeCase(c);
    rec.mode = 'replay';
    const r = await suite(fault('/nonexistent'), rec).openCase(task('k3'), undefined);
    await expect(r.clients.faulty!.callTool('lookup', { key: 'alpha' })).rejects.toThrow(
      "no recorded reply of MCP server 'faulty'",
    );
  });

  test("cache 'rw' (a read-only server) answers the same call of another case from the record", async () => {
    const rec = new MemoryRecorder('rw');
    const shared = {
      servers: {
        faulty: { command: process.execPath, args: [FAULT], env: { FAULT: { value: 'none' } }, cache: 'rw' as const },
      },
    };
    const live = suite(shared, rec);
    const c = await live.openCase(task('k4'), undefined);
    expect((await c.clients.faulty!.callTool('lookup', { key: 'gamma' })).text).toBe('"gamma" = 55');
    await live.closeCase(c);
    rec.mode = 'replay';
    const r = suite({ servers: { faulty: { ...shared.servers.faulty, command: '/nonexistent' } } }, rec);
    // a case never recorded still needs its session record; the shared call itself is keyed by tool and arguments
    await expect(r.openCase(task('k5'), undefined)).rejects.toThrow('for case k5');
    const again = await r.openCase(task('k4'), undefined);
    expect((await again.clients.faulty!.callTool('lookup', { key: 'gamma' })).text).toBe('"gamma" = 55');
  });
});

describe('Streamable HTTP', () => {
  let http: Server;
  let url = '';
  beforeAll(async () => {
    http = createServer(async (req, res) => {
      const server = new McpServer(
        { name: 'echo', version: '1.0.0' },
        { capabilities: { resources: {}, extensions: { 'io.modelcontextprotocol/skills': {} } } },
      );
      server.registerTool(
        'whoami',
        { description: 'The Authorization header this request came with.', inputSchema: {} },
        async (_args, extra) => ({
          content: [{ type: 'text', text: `you sent: ${String(extra.requestInfo?.headers.authorization)}` }],
        }),
      );
      const skill = '---\nname: tidy\ndescription: Keep things tidy.\n---\n# Tidy\n';
      server.registerResource('tidy', 'skill://tidy/SKILL.md', { mimeType: 'text/markdown' }, async () => ({
        contents: [{ uri: 'skill://tidy/SKILL.md', text: skill }],
      }));
      server.server.setRequestHandler(
        z.object({ method: z.literal('skills/get'), params: z.object({ uri: z.string() }) }),
        async () => ({
          skill: {
            uri: 'skill://tidy/SKILL.md',
            frontmatter: { name: 'tidy', description: 'Keep things tidy.' },
            resources: [{ uri: 'skill://tidy/SKILL.md', digest: `sha256:${'0'.repeat(64)}` }],
          },
        }),
      );
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close());
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`;
  });
  afterAll(() => new Promise<void>((r) => http.close(() => r())));

  test('headers come from the variables they name; the server echoing one gets it masked', async () => {
    const s = suite({ servers: { api: { url, headers: { Authorization: 'MCP_TEST_AUTH' } } } }, null, {
      MCP_TEST_AUTH: 'Bearer secret-0123456789',
    });
    const c = await s.openCase(task('h1'), undefined);
    expect(await c.remoteTools()[0]!.call('{}', { timeoutMs: 20_000 })).toEqual({ ok: true, content: 'you sent: ***' });
  });

  test('a server that stops answering mid-case is gone (the case is errored), and the next case connects again', async () => {
    const s = suite({ servers: { api: { url } } });
    const c = await s.openCase(task('h2'), undefined);
    const whoami = c.remoteTools()[0]!;
    http.closeAllConnections();
    await new Promise<void>((r) => http.close(() => r()));
    const gone = await whoami.call('{}', { timeoutMs: 20_000 }).catch((e: unknown) => e);
    expect(isMcpServerDied(gone)).toBe(true);
    // refused, or the kept-alive socket found closed: whichever the timing gives
    expect((gone as Error).message).toMatch(/^MCP server 'api' could not be reached \([A-Z_]+\) during tools\/call$/);
    await s.closeCase(c);
    await new Promise<void>((r) => http.listen(Number(new URL(url).port), '127.0.0.1', () => r()));
    const next = await s.openCase(task('h3'), undefined);
    expect((await next.remoteTools()[0]!.call('{}', { timeoutMs: 20_000 })).ok).toBe(true);
  });

  test('a skill whose SKILL.md does not match the digest its skills/get entry lists is not loaded', async () => {
    const s = suite({ servers: { api: { url } } });
    await expect(s.readSkill('api', 'skill://tidy')).rejects.toThrow(
      "the skill skill://tidy/SKILL.md of MCP server 'api' does not match its digest",
    );
  });
});

describe('skills from the example server', () => {
  test('read by the SEP-2640 layout, checked against its entry, recorded for a replay that starts nothing', async () => {
    const rec = new MemoryRecorder('rw');
    const example = (command: string) => ({ servers: { notes: { command, args: [EXAMPLE] } } });
    const skill = await suite(example(process.execPath), rec).readSkill('notes', 'skill://release-notes');
    expect(skill).toEqual({
      text: readFileSync(join(REPO, 'examples/mcp-skill-server/skills/release-notes/SKILL.md'), 'utf8'),
      path: 'mcp:notes:skill://release-notes/SKILL.md',
    });
    rec.mode = 'replay';
    expect(await suite(example('/nonexistent'), rec).readSkill('notes', 'skill://release-notes/SKILL.md')).toEqual(
      skill,
    );
    await expect(suite(example(process.execPath), rec).readSkill('notes', 'skill://other')).rejects.toThrow(
      "--model-cache replay: no recorded reply of MCP server 'notes' for the skill skill://other/SKILL.md",
    );
  });

  test('skillFileUri and relativize', () => {
    expect(skillFileUri('skill://acme/billing/refunds')).toBe('skill://acme/billing/refunds/SKILL.md');
    expect(skillFileUri('skill://git-workflow/SKILL.md')).toBe('skill://git-workflow/SKILL.md');
    expect(relativize('ENOENT: /out/ws/c1/notes.md; root /out/ws/c1', workspaceForms('/out/ws/c1'))).toBe(
      'ENOENT: notes.md; root .',
    );
  });
});
