/**
 * Reading the skill under test from an MCP server's resources (docs/agents.md#skills-from-mcp), by the
 * Skills extension's layout (SEP-2640): every file of a skill is a resource `skill://<skill-path>/<file>`,
 * its `SKILL.md` at `skill://<skill-path>/SKILL.md`, read with `resources/read`; the last segment of
 * `<skill-path>` is the skill's frontmatter `name`.
 *
 * A server that declares the extension (`capabilities.extensions["io.modelcontextprotocol/skills"]`)
 * answers `skills/get` with the skill's entry: its frontmatter and a SHA-256 digest of each file. Then
 * the SKILL.md read must match its digest and its frontmatter must equal the entry's, field by field, as
 * the extension requires of a host; a server that does not declare it is read as plain resources.
 * Nothing is ever written back to the server.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { frontmatterBlock } from '../skill/frontmatter.ts';
import { SkillOptError } from '../util/errors.ts';
import { oneLineClip } from '../util/clip.ts';
import type { LiveServer } from './live.ts';

export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';

function fail(suite: string, server: string, uri: string, why: string): never {
  throw new SkillOptError(`suite '${suite}': the skill ${uri} of MCP server '${server}' ${why}`);
}

/** The skill name a `skill://…/<name>/SKILL.md` URI carries. */
export function skillNameOf(uri: string): string | null {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(.+)\/SKILL\.md$/i.exec(uri);
  if (!m) return null;
  const segments = m[1]!.split('/').filter(Boolean);
  return segments.length ? segments[segments.length - 1]! : null;
}

/** The SKILL.md text of `uri` on `server`, checked against the server's skill entry when it serves one. */
export async function readServedSkill(server: LiveServer, uri: string, suite: string): Promise<string> {
  const name = server.server.name;
  if (skillNameOf(uri) === null)
    fail(suite, name, uri, 'is not a skill URI: expected skill://<skill-path>/SKILL.md (SEP-2640)');
  const extensions = server.capabilities.extensions as Record<string, unknown> | undefined;
  let entry: Record<string, unknown> | null = null;
  if (extensions && typeof extensions === 'object' && SKILLS_EXTENSION in extensions) {
    try {
      const got = await server.call('skills/get', { uri });
      entry = (got.skill ?? null) as Record<string, unknown> | null;
    } catch (e) {
      fail(
        suite,
        name,
        uri,
        `is not served: skills/get failed (${oneLineClip(server.mask(e instanceof Error ? e.message : String(e)), 200)})`,
      );
    }
    if (!entry || typeof entry !== 'object')
      fail(suite, name, uri, 'is not served: skills/get returned no skill entry');
  }
  let read;
  try {
    read = await server.readResource(uri);
  } catch (e) {
    fail(
      suite,
      name,
      uri,
      `could not be read: ${oneLineClip(server.mask(e instanceof Error ? e.message : String(e)), 200)}`,
    );
  }
  const item = read.contents.find((c) => c.uri === uri) ?? read.contents[0];
  if (!item) fail(suite, name, uri, 'could not be read: resources/read returned no contents');
  const bytes =
    typeof item.text === 'string'
      ? Buffer.from(item.text, 'utf8')
      : typeof item.blob === 'string'
        ? Buffer.from(item.blob, 'base64')
        : null;
  if (!bytes) fail(suite, name, uri, 'could not be read: its contents have neither text nor blob');
  const text = bytes.toString('utf8');
  if (entry) {
    const files = Array.isArray(entry.resources) ? (entry.resources as Array<Record<string, unknown>>) : null;
    const file = files?.find((f) => f.uri === uri);
    if (files && !file) fail(suite, name, uri, "is not listed in its own skills/get entry's resources");
    if (file) {
      const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      if (file.digest !== digest)
        fail(suite, name, uri, `does not match its digest (${String(file.digest)} listed, ${digest} read): not loaded`);
    }
    const block = frontmatterBlock(text);
    const served = block ? (parseYaml(block.yaml) as unknown) : null;
    if (entry.frontmatter !== undefined && !isDeepStrictEqual(served, entry.frontmatter)) {
      fail(suite, name, uri, "has frontmatter that differs from its skills/get entry's: not loaded");
    }
  }
  const block = frontmatterBlock(text);
  const declared = block ? (parseYaml(block.yaml) as { name?: unknown } | null)?.name : undefined;
  if (typeof declared === 'string' && declared !== skillNameOf(uri)) {
    fail(
      suite,
      name,
      uri,
      `is named '${declared}' in its frontmatter, but its URI's last segment is '${skillNameOf(uri)}' (they must be equal)`,
    );
  }
  return server.mask(text);
}
