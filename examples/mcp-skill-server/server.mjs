#!/usr/bin/env node
/**
 * An example MCP server that ships its own skill (docs/agents.md#skills-from-mcp), over stdio with the
 * official SDK. It serves:
 * - the skill `release-notes` by the Skills extension's layout (SEP-2640): its files as resources under
 *   `skill://release-notes/…` (read with `resources/read`), the extension declared in its capabilities,
 *   and `skills/list` / `skills/get` answering each skill's frontmatter and a SHA-256 digest per file;
 * - the tools that skill is about: `get_changes`, `list_issues` and `get_contributors` of a release.
 *
 *   node examples/mcp-skill-server/server.mjs
 *
 * skillopt reads the skill under test from it with `skill: { mcp: '<server>', uri: 'skill://release-notes' }`
 * and never writes anything back.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

const SKILLS = fileURLToPath(new URL('./skills/', import.meta.url));
const EXTENSION = 'io.modelcontextprotocol/skills';

/** Every file of a skill folder, by its path inside it. */
function filesOf(dir, base = dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesOf(p, base) : [relative(base, p).split('\\').join('/')];
  });
}

/** Each skill's entry (SEP-2640): its SKILL.md URI, its frontmatter as JSON, every file with its digest. */
const skills = readdirSync(SKILLS).map((name) => {
  const dir = join(SKILLS, name);
  const files = filesOf(dir).map((file) => {
    const bytes = readFileSync(join(dir, file));
    return {
      uri: `skill://${name}/${file}`,
      file,
      bytes,
      digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
    };
  });
  const text = readFileSync(join(dir, 'SKILL.md'), 'utf8');
  const frontmatter = parseYaml(/^---\n([\s\S]*?)\n---/.exec(text)[1]);
  return { uri: `skill://${name}/SKILL.md`, frontmatter, files };
});
const entry = (s) => ({
  uri: s.uri,
  frontmatter: s.frontmatter,
  resources: s.files.map((f) => ({ uri: f.uri, digest: f.digest })),
});

/** The release records the tools answer from. */
const RELEASES = {
  '2.1.0': {
    changes: ['CSV export', 'faster search'],
    fixed: ['#412 login loop', '#418 broken avatar upload'],
    contributors: ['ana', 'bo'],
  },
  '2.2.0': {
    changes: ['dark mode', 'keyboard shortcuts'],
    fixed: ['#455 crash on empty project'],
    contributors: ['ana', 'chen', 'dev'],
  },
  '2.3.0': {
    changes: ['audit log'],
    fixed: ['#501 wrong time zone in reports', '#507 stale cache after rename'],
    contributors: ['bo', 'eli'],
  },
  '2.4.0': {
    changes: ['SSO with SAML', 'webhooks'],
    fixed: ['#533 memory leak in the worker'],
    contributors: ['chen', 'fay', 'gus'],
  },
};
const release = (version) => {
  const r = RELEASES[version];
  if (!r) throw new Error(`no release "${version}" (releases: ${Object.keys(RELEASES).join(', ')})`);
  return r;
};

const server = new McpServer(
  { name: 'release-notes-server', version: '1.0.0' },
  { capabilities: { resources: {}, tools: {}, extensions: { [EXTENSION]: {} } } },
);

for (const s of skills) {
  for (const f of s.files) {
    const isSkillMd = f.file === 'SKILL.md';
    server.registerResource(
      isSkillMd ? s.frontmatter.name : `${s.frontmatter.name}/${f.file}`,
      f.uri,
      {
        mimeType: f.file.endsWith('.md') ? 'text/markdown' : 'application/octet-stream',
        ...(isSkillMd ? { description: s.frontmatter.description } : {}),
      },
      async () => ({ contents: [{ uri: f.uri, mimeType: 'text/markdown', text: f.bytes.toString('utf8') }] }),
    );
  }
}

server.server.setRequestHandler(
  z.object({
    method: z.literal('skills/list'),
    params: z.object({ cursor: z.string().optional() }).passthrough().optional(),
  }),
  async () => ({
    skills: skills.map(entry),
  }),
);
server.server.setRequestHandler(
  z.object({ method: z.literal('skills/get'), params: z.object({ uri: z.string() }).passthrough() }),
  async (request) => {
    const s = skills.find((x) => x.uri === request.params.uri);
    if (!s) throw new McpError(ErrorCode.InvalidParams, `not a skill this server serves: ${request.params.uri}`);
    return { skill: entry(s) };
  },
);

const version = { version: z.string().describe('the release version, e.g. 2.4.0') };
const text = (t) => ({ content: [{ type: 'text', text: t }] });
server.registerTool(
  'get_changes',
  { description: 'The changes a release shipped.', inputSchema: version },
  async ({ version: v }) => text(`Changes in ${v}: ${release(v).changes.join('; ')}.`),
);
server.registerTool(
  'list_issues',
  { description: 'The issues a release fixed.', inputSchema: version },
  async ({ version: v }) => text(`Fixed in ${v}: ${release(v).fixed.join('; ')}.`),
);
server.registerTool(
  'get_contributors',
  { description: 'Who contributed to a release.', inputSchema: version },
  async ({ version: v }) => text(`Contributors to ${v}: ${release(v).contributors.join(', ')}.`),
);

await server.connect(new StdioServerTransport());
