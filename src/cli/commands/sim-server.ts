/** `skillopt sim-server`: run the simulated OpenAI-compatible model server standalone (docs/simulated-model.md). */
import type { Command } from '../command.ts';
import { numberFlag, single, takeFlags } from '../args.ts';
import { SkillOptError } from '../../util/errors.ts';
import { startSimServer, type SimServer, type SimServerOptions } from '../../sim/server.ts';

const USAGE =
  'skillopt sim-server [--host 127.0.0.1] [--port 8000] [--model mitko] [--seed N] [--noise P] ' +
  '[--max-rules N] [--analyst-error-rate P] [--routing-noise P] [--latency-ms N] ' +
  '[--interference P] [--dilution X] [--dilution-rules N] [--dilution-chars N] [--analyst-misread-rate P] ' +
  '[--analyst-context-recall P] [--analyst-notes-effect P] [--analyst-generalize N] [--ranker-accuracy P]';

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
  'ranker-accuracy': 'rankerAccuracy',
} as const;

/**
 * Parse the command's flags into server options (defaults: 127.0.0.1:8000, model mitko, seed 0).
 * `--model` may repeat or list several ids separated by commas.
 */
export function parseSimServerArgs(argv: string[]): SimServerOptions {
  const args = takeFlags(argv, {
    valued: ['host', 'port', 'model', 'seed', 'noise', 'max-rules', 'analyst-error-rate', 'routing-noise', 'latency-ms', ...Object.keys(WORLD_FLAGS)],
  });
  if (args.rest.length > 0) {
    throw new SkillOptError(`sim-server: unexpected argument '${args.rest[0]}' (usage: ${USAGE})`);
  }
  const models = (args.flags.get('model') ?? []).flatMap((m) => m.split(',')).map((m) => m.trim()).filter(Boolean);
  const opts: SimServerOptions = {
    host: single(args, 'host') ?? '127.0.0.1',
    port: numberFlag(args, 'port') ?? 8000,
    models: models.length > 0 ? models : ['mitko'],
    seed: numberFlag(args, 'seed') ?? 0,
  };
  const noise = numberFlag(args, 'noise');
  if (noise !== undefined) opts.noise = noise;
  const maxRules = numberFlag(args, 'max-rules');
  if (maxRules !== undefined) opts.maxRules = maxRules;
  const rate = numberFlag(args, 'analyst-error-rate');
  if (rate !== undefined) opts.analystErrorRate = rate;
  const routing = numberFlag(args, 'routing-noise');
  if (routing !== undefined) opts.routingNoise = routing;
  const latency = numberFlag(args, 'latency-ms');
  if (latency !== undefined) opts.latencyMs = latency;
  for (const [flag, option] of Object.entries(WORLD_FLAGS) as [keyof typeof WORLD_FLAGS, (typeof WORLD_FLAGS)[keyof typeof WORLD_FLAGS]][]) {
    const v = numberFlag(args, flag);
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
  const log = serve.log ?? ((line: string) => console.log(line));
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
  usage: USAGE,
  run(argv: string[]): Promise<number> {
    return serveSimulated(parseSimServerArgs(argv));
  },
};
