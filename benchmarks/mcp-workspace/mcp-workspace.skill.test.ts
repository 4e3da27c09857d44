/**
 * mcp-workspace: work in a repository through a real, third-party MCP server (docs/agents.md#mcp).
 *
 * Each case gets its own workspace folder (`mcp.workspace`: a stable path under the run's output folder,
 * by case id), seeded with the task's files by `mcp.setup`, and its own `@modelcontextprotocol/server-filesystem`
 * started over stdio on that folder (`scope: 'case'`), from node_modules. The model sees relative paths
 * only, so a rerun sends the same requests. `get_file_info` is denied: its timestamps change on every run.
 *
 * Eight procedures of six tasks (2 train / 2 val / 2 test each): find the database or cache config that
 * sets a key and report its value; write a summary of the failing pytest or jest test to notes.md; list
 * the migrations newer than a version; create a report folder; find the invoice template; record the
 * last deploy's version in VERSION.
 *
 * Scored with `weighted` (threshold 0.85):
 * - calls (0.5): the procedure's read, search or create call, with its exact arguments;
 * - answer (0.2): the final answer names what the task asks (the value, the file, the folder);
 * - workspace (0.3): the workspace after the run, read through the MCP client (recorded, so a replay
 *   scores it with no server): the file written holds what it must, the folder exists, or nothing was
 *   added where nothing should change.
 * See README.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { defineSkillSuite, finalState, includesAll, toolCalls, weighted, type SkillTask } from 'skillopt';

interface Spec {
  procedure: string;
  calls: Array<{ name: string; args: Record<string, unknown> }>;
  report: string[];
  state: { unchanged?: true; file?: string; contains?: string[]; dir?: string };
  files: Record<string, string>;
}
type Task = SkillTask<string> & Spec;
const spec = (task: SkillTask<string>) => task as Task;

/** Started with node from the project's node_modules (a dev dependency): no download at run time. */
const FS_SERVER = 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js';

/** `list_directory`'s lines for the top level of a task's files, sorted. */
function topLevel(files: Record<string, string>): string[] {
  const names = new Map<string, boolean>();
  for (const p of Object.keys(files)) {
    const [first, ...rest] = p.split('/');
    names.set(first!, rest.length > 0 || names.get(first!) === true);
  }
  return [...names].map(([name, dir]) => `${dir ? '[DIR]' : '[FILE]'} ${name}`).sort();
}

const sortedLines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .sort();

const workspace = finalState<string>(
  async (_state, { task, mcp }) => {
    const fs = mcp!.fs!;
    const want = spec(task).state;
    if (want.file) {
      const read = await fs.callTool('read_text_file', { path: want.file });
      if (!read.ok) return { hard: 0, soft: 0, feedback: `${want.file} was not written` };
      const missing = (want.contains ?? []).filter((k) => !read.text.includes(k));
      return missing.length
        ? {
            hard: 0,
            soft: 0.5,
            feedback: `${want.file} does not say ${missing.map((m) => JSON.stringify(m)).join(', ')}`,
          }
        : { hard: 1, soft: 1, feedback: `${want.file} written` };
    }
    if (want.dir) {
      const parent = dirname(want.dir);
      const list = await fs.callTool('list_directory', { path: parent });
      const made = list.ok && sortedLines(list.text).includes(`[DIR] ${want.dir.slice(parent.length + 1)}`);
      return made
        ? { hard: 1, soft: 1, feedback: `${want.dir} created` }
        : { hard: 0, soft: 0, feedback: `${want.dir} was not created` };
    }
    const list = await fs.callTool('list_directory', { path: '.' });
    const now = list.ok ? sortedLines(list.text) : [];
    const added = now.filter((l) => !topLevel(spec(task).files).includes(l));
    return added.length
      ? { hard: 0, soft: 0, feedback: `nothing should change, but ${added.join(', ')} appeared` }
      : { hard: 1, soft: 1, feedback: 'unchanged' };
  },
  { name: 'workspace' },
);

defineSkillSuite<string>({
  name: 'mcp-workspace',
  tasks: 'benchmarks/mcp-workspace/tasks.json',
  skill: 'skills/mcp-workspace/initial.md',
  mcp: {
    servers: { fs: { command: process.execPath, args: [FS_SERVER, '${workspace}'], scope: 'case' } },
    tools: { deny: ['get_file_info', 'read_media_file'] },
    workspace: true,
    // the case's files, written into its workspace before the model's first call
    setup: (task, _mcp, { workspace: dir }) => {
      for (const [path, text] of Object.entries(spec(task).files)) {
        mkdirSync(dirname(join(dir!, path)), { recursive: true });
        writeFileSync(join(dir!, path), text);
      }
    },
  },
  maxTurns: 6,
  scorer: weighted<string>(
    [
      {
        scorer: toolCalls<string>({
          expected: (task) => spec(task).calls,
          order: 'subsequence',
          args: 'exact',
          name: 'calls',
        }),
        weight: 0.5,
      },
      { scorer: includesAll<string>((task) => spec(task).report, { name: 'answer' }), weight: 0.2 },
      { scorer: workspace, weight: 0.3 },
    ],
    { threshold: 0.85 },
  ),
});
