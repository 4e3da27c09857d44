/**
 * A fixed set of chat completion requests that exercise every mechanism of the simulated target and a few
 * optimizer stages: rules past the attention budget, competing rules, noise, samples (a trial's seed), call
 * rules triggered by the input and by a tool result, and an analyst stage. test/sim/profiles.test.ts pins
 * the replies of model ids without a profile to the bytes the simulator gave before profiles existed.
 */

const LABELS = ['disposed-object', 'null-ref', 'deadlock', 'timeout', 'auth', 'oom', 'race', 'config'];

/** A skill of `n` answer rules; the first ones share words, so inputs meet competing rules. */
function skill(n: number): string {
  const lines = ['# Triage', 'Answer with one label.', ''];
  for (let i = 0; i < n; i++) {
    const trigger = i % 5 === 0 ? `handler${i}` : `Signal${i}Exception`;
    lines.push(`- When the input mentions \`${trigger}\`, answer \`${LABELS[i % LABELS.length]}\`.`);
    if (i % 7 === 0)
      lines.push(`- When the input mentions \`handler\`, answer \`${LABELS[(i + 3) % LABELS.length]}\`.`);
  }
  return lines.join('\n');
}

const PROCEDURE = [
  '# Procedure',
  '- When the input mentions `smoke`, call `run_command` with `{"cmd": "python -m train --config <path> --smoke"}`.',
  '- If the result mentions `Traceback`, call `read_file` with `{"path": "<path>"}`.',
  '- If the result mentions `OK`, answer `smoke run of <path> done`.',
  '- When the input mentions `smoke`, answer `smoke done`.',
].join('\n');

const TOOLS = [
  { type: 'function', function: { name: 'run_command', parameters: { type: 'object' } } },
  { type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } },
];

export type PinnedRequest = Record<string, unknown>;

/** The requests, for model id `model`. */
export function pinnedRequests(model: string): PinnedRequest[] {
  const out: PinnedRequest[] = [];
  for (const size of [6, 30, 60]) {
    const system = skill(size);
    for (let i = 0; i < size; i += 3) {
      const input = `Crash report ${i}: Signal${i}Exception thrown in handler${i - (i % 5)} while handler ran`;
      const messages = [
        { role: 'system', content: system },
        { role: 'user', content: input },
      ];
      out.push({ model, messages });
      out.push({ model, messages, seed: i % 4, temperature: 1 });
    }
  }
  const smoke = 'Run the smoke test of configs/local.yaml';
  out.push({
    model,
    messages: [
      { role: 'system', content: PROCEDURE },
      { role: 'user', content: smoke },
    ],
    tools: TOOLS,
  });
  const called = {
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: 'call_1',
        type: 'function',
        function: { name: 'run_command', arguments: '{"cmd":"python -m train --config configs/local.yaml --smoke"}' },
      },
    ],
  };
  for (const result of ['Traceback in logs/run-1.txt', 'OK configs/local.yaml']) {
    out.push({
      model,
      messages: [
        { role: 'system', content: PROCEDURE },
        { role: 'user', content: smoke },
        called,
        { role: 'tool', tool_call_id: 'call_1', content: result },
      ],
      tools: TOOLS,
      seed: 2,
    });
  }
  out.push({
    model,
    messages: [
      { role: 'system', content: 'You are the SkillOpt analyst_error optimizer.' },
      {
        role: 'user',
        content: [
          '# SkillOpt stage: analyst_error',
          '<current_skill>\n' + skill(6) + '\n</current_skill>',
          '<trajectories>\n' +
            [1, 2, 3]
              .map(
                (k) =>
                  `### Trajectory ${k}\nInput: pool exhausted in SqlConnectionPool ${k}\nOutput: unknown\nExpected: timeout\nScore: 0`,
              )
              .join('\n\n') +
            '\n</trajectories>',
        ].join('\n\n'),
      },
    ],
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'analyst_error', schema: { type: 'object' }, strict: true },
    },
  });
  return out;
}
