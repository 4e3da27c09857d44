/**
 * mcp-memory: a stateful MCP server, @modelcontextprotocol/server-memory, as a suite's tools
 * (docs/agents.md#mcp). It keeps a knowledge graph in a file, so it is started for each case (`scope:
 * 'case'`) with its file in the case's workspace: no case sees what another one stored. `mcp.setup` seeds
 * each case's graph through the client (recorded with the case, so a replay needs no server).
 *
 * Eight tasks: look up a person's badge number (four), or store a new one (four). Scored on the call
 * made, the answer, and the graph after the run, read through the client: exactly the people the case
 * seeded or stored — a graph that kept another case's people fails (the state leaked).
 */
import { defineSkillSuite, finalState, includesAll, toolCalls, weighted, type SkillTask } from 'skillopt';

interface Spec {
  seed: Array<{ name: string; entityType: string; observations: string[] }>;
  calls: Array<{ name: string; args: Record<string, unknown> }>;
  entities: string[];
}
type Task = SkillTask<string> & Spec;
const spec = (task: SkillTask<string>) => task as Task;

const graph = finalState<string>(
  async (_state, { task, mcp }) => {
    const read = await mcp!.memory!.callTool('read_graph');
    const names = ((read.structuredContent as { entities?: Array<{ name: string }> } | undefined)?.entities ?? [])
      .map((e) => e.name)
      .sort();
    const want = [...spec(task).entities].sort();
    const ok = JSON.stringify(names) === JSON.stringify(want);
    return {
      hard: ok ? 1 : 0,
      soft: ok ? 1 : 0,
      feedback: ok
        ? `the graph holds ${want.join(', ')}`
        : `the graph holds ${names.join(', ') || 'nobody'}, expected ${want.join(', ')}`,
    };
  },
  { name: 'graph' },
);

defineSkillSuite<string>({
  name: 'mcp-memory',
  tasks: 'benchmarks/mcp-memory/tasks.json',
  skill: 'skills/mcp-memory/initial.md',
  mcp: {
    servers: {
      memory: {
        command: process.execPath,
        args: ['node_modules/@modelcontextprotocol/server-memory/dist/index.js'],
        env: { MEMORY_FILE_PATH: { value: '${workspace}/memory.jsonl' } },
        scope: 'case',
      },
    },
    workspace: true,
    setup: async (task, mcp) => {
      await mcp.memory!.callTool('create_entities', { entities: spec(task).seed });
    },
  },
  maxTurns: 4,
  scorer: weighted<string>(
    [
      { scorer: toolCalls<string>({ expected: (task) => spec(task).calls, name: 'calls' }), weight: 0.4 },
      { scorer: includesAll<string>((task) => [task.expected], { name: 'answer' }), weight: 0.2 },
      { scorer: graph, weight: 0.4 },
    ],
    { threshold: 0.85 },
  ),
});
