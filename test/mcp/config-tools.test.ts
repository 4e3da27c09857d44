/**
 * A suite's `mcp` option checked (src/mcp/config.ts), a server's settings resolved against the environment
 * (secrets by variable name, masked), and what the model is offered (src/mcp/tools.ts): the names, the
 * allow and deny lists, and results as text.
 */
import { describe, expect, test } from 'vitest';
import { checkMcpOptions, maskSecrets, resolveServer } from '../../src/mcp/config.ts';
import { namesTool, offerTools, resultAsText, toolListHash } from '../../src/mcp/tools.ts';
import type { ListedTool } from '../../src/mcp/client.ts';

const stdio = { command: 'node', args: ['server.js'] };

describe('checkMcpOptions', () => {
  test('defaults: scope suite, cache record, no workspace', () => {
    const c = checkMcpOptions('s', { servers: { fs: stdio } });
    expect(c.servers).toEqual([
      { name: 'fs', config: stdio, scope: 'suite', cache: 'record', startTimeoutMs: 30_000, usesWorkspace: false },
    ]);
    expect(c).toMatchObject({ allow: null, deny: [], workspace: false, setup: null });
  });

  test.each([
    [{ servers: {} }, "suite 's': mcp.servers must name at least one server"],
    [
      { servers: { fs: stdio }, tool: {} },
      "suite 's': mcp.tool is not an option (the options are servers, tools, cache, workspace, setup)",
    ],
    [
      { servers: { fs: { ...stdio, url: 'http://127.0.0.1:1/mcp' } } },
      'mcp.servers.fs must have exactly one of `command` (stdio) and `url` (Streamable HTTP)',
    ],
    [{ servers: { 'f s': stdio } }, 'mcp.servers.f s is not a server name'],
    [
      { servers: { fs: { ...stdio, env: { KEY: 'sk-live-1234' } } } },
      'mcp.servers.fs.env.KEY must name an environment variable',
    ],
    [
      { servers: { fs: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer x' } } } },
      'mcp.servers.fs.headers.Authorization must name an environment variable',
    ],
    [{ servers: { fs: { ...stdio, cwd: 3 } } }, 'mcp.servers.fs.cwd must be a folder'],
    [
      { servers: { fs: { url: 'http://127.0.0.1:1/mcp', args: [] } } },
      'mcp.servers.fs.args is not an option of an HTTP server',
    ],
    [{ servers: { fs: { ...stdio, scope: 'run' } } }, "mcp.servers.fs.scope must be 'suite' or 'case'"],
    [{ servers: { fs: stdio }, cache: 'ro' } as object, "mcp.cache must be 'record' or 'rw'"],
    [
      { servers: { fs: { command: 'node', args: ['${workspace}'] } } },
      "mcp.servers.fs uses ${workspace}, which is a case's folder: give the server scope: 'case' and the suite mcp.workspace: true",
    ],
    [
      { servers: { fs: stdio }, tools: { allow: ['web/fetch'] } },
      "mcp.tools.allow names 'web/fetch', but there is no server 'web' (the servers are fs)",
    ],
  ])('%j is one line naming the key', (mcp, message) => {
    expect(() => checkMcpOptions('s', mcp)).toThrow(message);
  });

  test('${workspace} is allowed in a case-scoped server of a suite with workspaces, also in a plain env value', () => {
    const c = checkMcpOptions('s', {
      servers: {
        mem: { command: 'node', env: { MEMORY_FILE_PATH: { value: '${workspace}/m.jsonl' } }, scope: 'case' },
      },
      workspace: true,
    });
    expect(c.servers[0]!.usesWorkspace).toBe(true);
  });
});

describe('resolveServer', () => {
  const [server] = checkMcpOptions('s', {
    servers: {
      fs: {
        command: 'node',
        args: ['s.js', '${workspace}/x'],
        cwd: '${workspace}',
        env: { TOKEN: 'SERVICE_TOKEN', MODE: { value: 'fast' } },
        scope: 'case',
      },
    },
    workspace: true,
  }).servers;

  test('a variable named in env gives its value; a plain value is used as is; ${workspace} is the case folder', () => {
    const r = resolveServer(server!, '/w/c1', { SERVICE_TOKEN: 'tok-0123456789' });
    expect(r.transport).toEqual({
      kind: 'stdio',
      command: 'node',
      args: ['s.js', '/w/c1/x'],
      cwd: '/w/c1',
      env: { TOKEN: 'tok-0123456789', MODE: 'fast' },
    });
    expect(r.secrets).toEqual(['tok-0123456789']);
    expect(r.label).toBe('node s.js /w/c1/x');
  });

  test('a variable that is not set is an error naming it (never its value)', () => {
    expect(() => resolveServer(server!, '/w', {})).toThrow(
      "MCP server 'fs': env.TOKEN names the environment variable SERVICE_TOKEN, which is not set",
    );
  });

  test('headers of an HTTP server come from their variables', () => {
    const [http] = checkMcpOptions('s', {
      servers: { api: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'API_AUTH' } } },
    }).servers;
    expect(resolveServer(http!, null, { API_AUTH: 'Bearer abcdefgh123' }).transport).toEqual({
      kind: 'http',
      url: 'http://127.0.0.1:9/mcp',
      headers: { Authorization: 'Bearer abcdefgh123' },
    });
  });

  test('maskSecrets hides every value', () => {
    expect(maskSecrets('token tok-0123456789 echoed: tok-0123456789', ['tok-0123456789'])).toBe(
      'token *** echoed: ***',
    );
  });
});

const t = (name: string, extra: Partial<ListedTool> = {}): ListedTool => ({
  name,
  description: `${name} tool`,
  inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  ...extra,
});

describe('offerTools', () => {
  test('unique names are kept, the schema passed through as given', () => {
    const schema = {
      type: 'object',
      properties: { q: { type: 'string', pattern: '^x' } },
      $schema: 'http://json-schema.org/draft-07/schema#',
    };
    const out = offerTools('s', [{ server: 'fs', tools: [t('read_file', { inputSchema: schema })] }], {
      allow: null,
      deny: [],
      reserved: [],
    });
    expect(out).toEqual([
      {
        offered: 'read_file',
        server: 'fs',
        tool: 'read_file',
        spec: { name: 'read_file', description: 'read_file tool', parameters: schema },
      },
    ]);
  });

  test('a name two servers list, or one the suite already offers, is prefixed with the server on each side', () => {
    const out = offerTools(
      's',
      [
        { server: 'a', tools: [t('search'), t('read')] },
        { server: 'b', tools: [t('search'), t('load_skill')] },
      ],
      { allow: null, deny: [], reserved: ['load_skill'] },
    );
    expect(out.map((o) => [o.offered, `${o.server}/${o.tool}`])).toEqual([
      ['a_search', 'a/search'],
      ['read', 'a/read'],
      ['b_search', 'b/search'],
      ['b_load_skill', 'b/load_skill'],
    ]);
  });

  test('a name OpenAI would refuse becomes server_name with its odd characters as _, cut to 64', () => {
    const long = `x${'y'.repeat(80)}`;
    const out = offerTools('s', [{ server: 'docs', tools: [t('files.read'), t(long)] }], {
      allow: null,
      deny: [],
      reserved: [],
    });
    expect(out.map((o) => o.offered)).toEqual(['docs_files_read', `docs_${long}`.slice(0, 64)]);
    for (const o of out) expect(o.offered).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  test('allow and deny by name, server/tool or server/*; deny wins; an entry naming no listed tool is an error', () => {
    const listings = [
      { server: 'fs', tools: [t('read'), t('write'), t('stat')] },
      { server: 'web', tools: [t('fetch')] },
    ];
    const names = (o: { allow: string[] | null; deny: string[] }) =>
      offerTools('s', listings, { ...o, reserved: [] }).map((x) => `${x.server}/${x.tool}`);
    expect(names({ allow: ['fs/*'], deny: ['write'] })).toEqual(['fs/read', 'fs/stat']);
    expect(names({ allow: ['read', 'web/fetch'], deny: [] })).toEqual(['fs/read', 'web/fetch']);
    expect(() => names({ allow: null, deny: ['fs/delete'] })).toThrow(
      "suite 's': mcp.tools.deny names 'fs/delete', which no server lists (fs: read, write, stat; web: fetch)",
    );
    expect(namesTool('fs/*', 'fs', 'x')).toBe(true);
    expect(namesTool('x', 'web', 'x')).toBe(true);
  });

  test('the tool list hash changes with any field of any tool', () => {
    expect(toolListHash([t('a')])).toBe(toolListHash([t('a')]));
    expect(toolListHash([t('a')])).not.toBe(toolListHash([t('a', { description: 'changed' })]));
  });
});

describe('resultAsText', () => {
  test('text items joined; an image or audio item is a placeholder with its size; resources by their text or URI', () => {
    const png = Buffer.alloc(1000, 7).toString('base64');
    expect(
      resultAsText({
        content: [
          { type: 'text', text: 'two files' },
          { type: 'image', mimeType: 'image/png', data: png },
          { type: 'audio', mimeType: 'audio/wav', data: 'AAAA' },
          { type: 'resource', resource: { uri: 'file:///a.md', text: '# A' } },
          { type: 'resource', resource: { uri: 'file:///b.bin', mimeType: 'application/zip', blob: 'AAAAAA==' } },
          { type: 'resource_link', uri: 'file:///c.md', name: 'c' },
        ],
      }),
    ).toEqual({
      ok: true,
      content:
        'two files\n[image: image/png, 1000 bytes]\n[audio: audio/wav, 3 bytes]\n# A\n[resource: file:///b.bin, application/zip, 4 bytes]\n[resource: file:///c.md (c)]',
    });
  });

  test('structured content when there is no content; isError is a tool error', () => {
    expect(resultAsText({ structuredContent: { n: 1 } })).toEqual({ ok: true, content: '{"n":1}' });
    expect(resultAsText({ content: [{ type: 'text', text: 'ENOENT: notes.md' }], isError: true })).toEqual({
      ok: false,
      content: 'error: ENOENT: notes.md',
    });
  });
});
