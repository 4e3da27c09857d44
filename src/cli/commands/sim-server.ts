/** `skillopt sim-server`: run the simulated OpenAI-compatible model server standalone (docs/simulated-model.md). */
import type { Command } from '../command.ts';
import { defineCommand, helpText, noOperands, parseFlags } from '../args.ts';
import { DEFAULT_SIM_KNOBS } from '../../sim/knobs.ts';
import { startSimServer, type SimServer, type SimServerOptions } from '../../sim/server.ts';
import { printOut } from '../../util/print.ts';

const D = DEFAULT_SIM_KNOBS;

/** The world's other knobs (src/sim/knobs.ts): flag → option. Unset ones keep the default world. */
const WORLD_FLAGS = {
  interference: 'interference',
  dilution: 'dilution',
  'dilution-rules': 'dilutionRules',
  'dilution-chars': 'dilutionChars',
  'analyst-misread-rate': 'analystMisreadRate',
  'analyst-context-recall': 'analystContextRecall',
  'analyst-notes-effect': 'analystNotesEffect',
  'analyst-generalize': 'analystGeneralize',
  'analyst-budget-compress': 'analystBudgetCompress',
  'ranker-accuracy': 'rankerAccuracy',
} as const;

const SPEC = defineCommand({
  name: 'sim-server',
  flags: {
    host: { type: 'string', default: '127.0.0.1', help: 'the address to listen on' },
    port: { type: 'number', default: 8000, help: 'the port to listen on (0 = any free port)' },
    model: {
      type: 'list',
      arg: 'ID',
      help: 'the model ids it serves (repeat the flag or separate ids by commas; default mitko); sim-small, sim-medium and sim-large have profiles (docs/simulated-model.md)',
    },
    seed: { type: 'number', arg: 'N', help: `seed of every pseudo-random decision (default ${D.seed})` },
    noise: { type: 'number', arg: 'P', help: `target: probability of a wrong answer (default ${D.noise})` },
    'max-rules': {
      type: 'number',
      arg: 'N',
      help: `target: rules after the N-th are not seen; 0 = unlimited (default ${D.maxRules})`,
    },
    'analyst-error-rate': {
      type: 'number',
      arg: 'P',
      help: `analysts: probability of a rule keyed on a common word (default ${D.analystErrorRate})`,
    },
    'routing-noise': {
      type: 'number',
      arg: 'P',
      help: `agents: probability that a load_skill decision is replaced (default ${D.routingNoise})`,
    },
    'latency-ms': { type: 'number', arg: 'N', help: "delay every reply by N ms (default 0: a profile's latency)" },
    'latency-scale': { type: 'number', arg: 'X', help: "multiply a profile's latency by X (default 1; 0 = none)" },
    interference: {
      type: 'number',
      arg: 'P',
      help: `target: probability of following a competing rule (default ${D.interference})`,
    },
    dilution: {
      type: 'number',
      arg: 'X',
      help: `target: miss probability per unit of overload past the attention budget (default ${D.dilution})`,
    },
    'dilution-rules': {
      type: 'number',
      arg: 'N',
      help: `target: attention budget in rules; 0 = none (default ${D.dilutionRules})`,
    },
    'dilution-chars': {
      type: 'number',
      arg: 'N',
      help: `target: attention budget in characters of system prompt; 0 = none (default ${D.dilutionChars})`,
    },
    'analyst-misread-rate': {
      type: 'number',
      arg: 'P',
      help: `analysts: probability of a wrong rule for a failure the skill already answers (default ${D.analystMisreadRate})`,
    },
    'analyst-context-recall': {
      type: 'number',
      arg: 'P',
      help: `analysts: probability of heeding one item of their context (default ${D.analystContextRecall})`,
    },
    'analyst-notes-effect': {
      type: 'number',
      arg: 'P',
      help: `analysts: fraction by which notes in the prompt cut the error rate (default ${D.analystNotesEffect})`,
    },
    'analyst-generalize': {
      type: 'number',
      arg: 'N',
      help: `analysts: successes needed to generalize a rule; 0 = never (default ${D.analystGeneralize})`,
    },
    'analyst-budget-compress': {
      type: 'number',
      arg: 'P',
      help: `analysts, several models: probability of compressing, not adding a rule, for a failure on one model only whose attention budget the skill exceeds (default ${D.analystBudgetCompress})`,
    },
    'ranker-accuracy': {
      type: 'number',
      arg: 'P',
      help: `ranking: probability that each pick is the best supported item left (default ${D.rankerAccuracy})`,
    },
  },
});

/**
 * Parse the command's flags into server options (defaults: 127.0.0.1:8000, model mitko, seed 0).
 * `--model` may repeat or list several ids separated by commas.
 */
export function parseSimServerArgs(argv: string[]): SimServerOptions {
  const { values: args, positionals } = parseFlags(SPEC, argv);
  noOperands(SPEC, positionals);
  const models = args.model
    .flatMap((m) => m.split(','))
    .map((m) => m.trim())
    .filter(Boolean);
  const opts: SimServerOptions = {
    host: args.host,
    port: args.port,
    models: models.length > 0 ? models : ['mitko'],
    seed: args.seed ?? 0,
  };
  if (args.noise !== undefined) opts.noise = args.noise;
  if (args['max-rules'] !== undefined) opts.maxRules = args['max-rules'];
  if (args['analyst-error-rate'] !== undefined) opts.analystErrorRate = args['analyst-error-rate'];
  if (args['routing-noise'] !== undefined) opts.routingNoise = args['routing-noise'];
  if (args['latency-ms'] !== undefined) opts.latencyMs = args['latency-ms'];
  if (args['latency-scale'] !== undefined) opts.latencyScale = args['latency-scale'];
  for (const [flag, option] of Object.entries(WORLD_FLAGS) as [
    keyof typeof WORLD_FLAGS,
    (typeof WORLD_FLAGS)[keyof typeof WORLD_FLAGS],
  ][]) {
    const v = args[flag];
    if (v !== undefined) opts[option] = v;
  }
  return opts;
}

export interface ServeOptions {
  /** Stop when aborted (tests); SIGINT/SIGTERM always stop it too unless `handleSignals` is false. */
  signal?: AbortSignal;
  handleSignals?: boolean;
  /** Where the banner and request lines go; default console.log. */
  log?: (line: string) => void;
  /** Called once the server listens. */
  onListening?: (server: SimServer) => void;
}

/**
 * Start the server and keep it running until SIGINT/SIGTERM or `signal` aborts; then close it and
 * resolve 0. A port in use rejects with a one-line SkillOptError.
 */
export async function serveSimulated(options: SimServerOptions, serve: ServeOptions = {}): Promise<number> {
  const log = serve.log ?? ((line: string) => printOut(line));
  const server = await startSimServer({ ...options, log });
  serve.onListening?.(server);
  await new Promise<void>((resolve) => {
    const signals: NodeJS.Signals[] = serve.handleSignals === false ? [] : ['SIGINT', 'SIGTERM'];
    const stop = () => {
      for (const s of signals) process.off(s, stop);
      serve.signal?.removeEventListener('abort', stop);
      resolve();
    };
    for (const s of signals) process.once(s, stop);
    if (serve.signal?.aborted) stop();
    else serve.signal?.addEventListener('abort', stop, { once: true });
  });
  await server.close();
  return 0;
}

export const command: Command = {
  usage: helpText(SPEC),
  run(argv: string[]): Promise<number> {
    return serveSimulated(parseSimServerArgs(argv));
  },
};
