/**
 * The repo-operator benchmark's world: a virtual SkillOpt-style repository (repo.json: path → content) and
 * the simulated shell over it. Pure functions over a per-case `RepoState`; the suite file wraps them as the
 * tools `run_command`, `read_file` and `list_dir`, and its scorers read the state after the run.
 *
 * The shell knows the two entry points of such a repository, the training and the eval-only script:
 *   python3 scripts/train.py --config <yaml> [--cfg-options key=value ...]
 *   python3 scripts/eval_only.py --config <yaml> --skill <best_skill.md> --split <train|val|test> [--cfg-options ...]
 * plus `ls` and `cat`. It checks the config path and every `--cfg-options` key against
 * configs/_base_/default.yaml, refuses a long training run of a config that has no passing smoke test in
 * this case, and writes a finished run's output folder (best_skill.md, metrics.json, history.jsonl) into
 * the tree. Every failure is a `ShellError` with a one-line, concrete message.
 */
import { readFileSync } from 'node:fs';

/** A failure the agent should see as the tool's result (the suite turns it into a ToolError). */
export class ShellError extends Error {
  override name = 'ShellError';
}

export interface CommandRecord {
  cmd: string;
  /** `train` / `eval`: an entry point; `shell`: ls, cat, source; `unknown`: not a command this shell runs. */
  kind: 'train' | 'eval' | 'shell' | 'unknown';
  ok: boolean;
  /** The long run was refused for want of a smoke test. */
  refused?: boolean;
  error?: string;
  config?: string;
  /** A training run with the smoke knobs (train.num_epochs=1, env.limit ≤ 5). */
  smoke?: boolean;
  out?: string;
  optimizerBackend?: string;
  targetBackend?: string;
}

export interface RepoState {
  files: Map<string, string>;
  commands: CommandRecord[];
  /** Paths read (read_file, cat) and listed (list_dir, ls), in order. */
  reads: string[];
  lists: string[];
  /** Configs with a passing smoke run: the given ones, then those of this case. */
  smoked: Set<string>;
}

const TREE: Record<string, string> = JSON.parse(readFileSync(new URL('./repo.json', import.meta.url), 'utf8'));

/** A fresh copy of the repository; `smoked` lists configs whose smoke test passed before the case. */
export function createRepoState(smoked: readonly string[] = []): RepoState {
  return { files: new Map(Object.entries(TREE)), commands: [], reads: [], lists: [], smoked: new Set(smoked) };
}

export const SMOKE_KNOBS = 'train.num_epochs=1 train.batch_size=2 env.workers=1 env.limit=2';

function normalize(path: string): string {
  let p = path.trim().replace(/^\.\//, '').replace(/\/+$/, '');
  if (p === '.' || p === '') p = '';
  return p;
}

function isDir(state: RepoState, dir: string): boolean {
  if (dir === '') return true;
  for (const k of state.files.keys()) if (k.startsWith(dir + '/')) return true;
  return false;
}

export function readFile(state: RepoState, path: string): string {
  const p = normalize(path);
  state.reads.push(p);
  const content = state.files.get(p);
  if (content !== undefined) return content;
  if (isDir(state, p)) throw new ShellError(`read_file: ${p || '.'} is a directory (use list_dir)`);
  throw new ShellError(`read_file: no such file: ${p}`);
}

export function listDir(state: RepoState, path: string): string {
  const p = normalize(path);
  state.lists.push(p);
  if (!isDir(state, p)) {
    if (state.files.has(p)) throw new ShellError(`list_dir: ${p} is a file (use read_file)`);
    throw new ShellError(`list_dir: no such directory: ${p}`);
  }
  const prefix = p === '' ? '' : p + '/';
  const entries = new Set<string>();
  for (const k of state.files.keys()) {
    if (!k.startsWith(prefix)) continue;
    const rest = k.slice(prefix.length);
    const slash = rest.indexOf('/');
    entries.add(slash < 0 ? rest : rest.slice(0, slash + 1));
  }
  return [...entries].sort().join('\n');
}

/** `section.key` → default, from the two-level configs/_base_/default.yaml of the tree. */
function parseYaml(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').replace(/^#.*$/, '');
    if (line.trim() === '') continue;
    const m = /^(\s*)([A-Za-z_][A-Za-z0-9_]*):\s*(.*)$/.exec(line);
    if (!m) continue;
    const [, indent, key, value] = m as unknown as [string, string, string, string];
    if (indent === '') {
      if (value === '') section = key;
      else out.set(key, value);
    } else out.set(`${section}.${key}`, value.replace(/^"(.*)"$/, '$1'));
  }
  return out;
}

function knownKeys(state: RepoState): Map<string, string> {
  const base = state.files.get('configs/_base_/default.yaml');
  if (base === undefined) throw new ShellError('error: configs/_base_/default.yaml is missing');
  return parseYaml(base);
}

function suggest(key: string, keys: Iterable<string>): string {
  const [section, leaf = ''] = key.split('.');
  const all = [...keys];
  const leafOf = (k: string) => k.slice(k.indexOf('.') + 1);
  const close = (k: string) =>
    leaf.length >= 3 &&
    (leafOf(k).includes(leaf) || leaf.includes(leafOf(k)) || leafOf(k).startsWith(leaf.slice(0, 3)));
  const hit = all.find((k) => k.startsWith(section + '.') && close(k)) ?? all.find((k) => close(k));
  return hit ? ` (did you mean ${hit}?)` : '';
}

/** Splits a command line into words: backslash-newline continuations joined, simple quotes honoured. */
function words(cmd: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  const text = cmd.replace(/\\\r?\n/g, ' ');
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

interface EntryArgs {
  config?: string;
  skill?: string;
  split?: string;
  options: string[];
}

function parseEntryArgs(script: string, args: string[]): EntryArgs {
  const out: EntryArgs = { options: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const value = () => {
      const v = args[i + 1];
      if (v === undefined || v.startsWith('--'))
        throw new ShellError(`${script}: error: argument ${a}: expected one argument`);
      i++;
      return v;
    };
    if (a === '--config') out.config = value();
    else if (a === '--skill') out.skill = value();
    else if (a === '--split') out.split = value();
    else if (a === '--cfg-options') {
      while (args[i + 1] !== undefined && !args[i + 1]!.startsWith('--')) out.options.push(args[++i]!);
    } else throw new ShellError(`${script}: error: unrecognized argument: ${a}`);
  }
  return out;
}

function entryPoint(state: RepoState, rec: CommandRecord, script: 'train' | 'eval', args: string[]): string {
  const name = script === 'train' ? 'scripts/train.py' : 'scripts/eval_only.py';
  const a = parseEntryArgs(name, args);
  if (!a.config) throw new ShellError(`${name}: error: the following arguments are required: --config`);
  const config = normalize(a.config);
  rec.config = config;
  const text = state.files.get(config);
  if (text === undefined) {
    const dir = config.includes('/') ? config.slice(0, config.lastIndexOf('/')) : '';
    const there = isDir(state, dir) && dir !== '' ? ` (${dir} has: ${listDir(state, dir).split('\n').join(', ')})` : '';
    if (dir !== '') state.lists.pop();
    throw new ShellError(`${name}: error: config not found: ${config}${there}`);
  }
  const keys = knownKeys(state);
  const cfg = new Map(keys);
  for (const [k, v] of parseYaml(text)) if (keys.has(k)) cfg.set(k, v);
  for (const opt of a.options) {
    const eq = opt.indexOf('=');
    if (eq <= 0) throw new ShellError(`${name}: error: --cfg-options expects key=value, got ${opt}`);
    const key = opt.slice(0, eq);
    if (!keys.has(key))
      throw new ShellError(`${name}: error: unknown key in --cfg-options: ${key}${suggest(key, keys.keys())}`);
    cfg.set(key, opt.slice(eq + 1));
  }
  const backend = cfg.get('model.backend')!;
  const optimizerBackend = cfg.get('model.optimizer_backend')!;
  const targetBackend = cfg.get('model.target_backend')!;
  rec.optimizerBackend = optimizerBackend;
  rec.targetBackend = targetBackend;
  if ((optimizerBackend === 'openai_compat' || targetBackend === 'openai_compat') && !cfg.get('model.base_url')) {
    throw new ShellError(
      `${name}: error: openai_compat needs model.base_url (for the local server: http://localhost:8000/v1)`,
    );
  }
  const bench = config.split('/')[1] ?? 'run';
  const out = normalize(
    cfg.get('env.out_root') || `outputs/${bench.replace(/-/g, '_')}_${script === 'train' ? 'run' : 'eval'}`,
  );
  rec.out = out;
  const limit = Number(cfg.get('env.limit'));
  const warn =
    optimizerBackend !== targetBackend
      ? `warning: mixed backends: optimizer ${optimizerBackend}, target ${targetBackend} (model.backend ${backend} does not set them)\n`
      : '';
  const models = `optimizer ${optimizerBackend}/${cfg.get('model.optimizer')}, target ${targetBackend}/${cfg.get('model.target')}`;

  if (script === 'train') {
    const smoke = Number(cfg.get('train.num_epochs')) <= 1 && limit >= 1 && limit <= 5;
    rec.smoke = smoke;
    if (!smoke && !state.smoked.has(config)) {
      rec.refused = true;
      throw new ShellError(
        `refused: a full training run of ${config} (train.num_epochs=${cfg.get('train.num_epochs')}, env.limit=${limit || 'all'}) takes hours; run a smoke test of this config first (--cfg-options ${SMOKE_KNOBS})`,
      );
    }
    if (smoke) state.smoked.add(config);
    const [val, baseline, step] = smoke ? ['0.500', '0.000', 1] : ['0.812', '0.219', 6];
    state.files.set(`${out}/best_skill.md`, `# best skill (${config}, step ${step})\n`);
    state.files.set(
      `${out}/metrics.json`,
      JSON.stringify(
        {
          config,
          best_step: step,
          best_skill: `${out}/best_skill.md`,
          baseline_val_hard: Number(baseline),
          best_val_hard: Number(val),
        },
        null,
        2,
      ) + '\n',
    );
    state.files.set(
      `${out}/history.jsonl`,
      `{"step": 0, "val_hard": ${baseline}}\n{"step": ${step}, "val_hard": ${val}}\n`,
    );
    return (
      warn +
      `best skill: ${out}/best_skill.md\n` +
      `val hard ${val} (baseline ${baseline}, best at step ${step})${smoke ? `, smoke test on ${limit} tasks` : ''}\n` +
      `output folder: ${out} (best_skill.md, metrics.json, history.jsonl)\n` +
      `config: ${config} (${models})`
    );
  }

  if (!a.skill) throw new ShellError(`${name}: error: the following arguments are required: --skill`);
  const skill = normalize(a.skill);
  if (!state.files.has(skill)) throw new ShellError(`${name}: error: skill file not found: ${skill}`);
  const split = a.split ?? cfg.get('env.split')!;
  if (!['train', 'val', 'test'].includes(split))
    throw new ShellError(`${name}: error: argument --split: invalid choice: ${split} (choose from train, val, test)`);
  const runMetrics = state.files.get(skill.replace(/[^/]+$/, 'metrics.json'));
  const score = runMetrics ? Number((JSON.parse(runMetrics) as { test_hard?: number }).test_hard ?? 0.5) : 0.5;
  const n = limit > 0 ? Math.min(limit, 32) : 32;
  state.files.set(`${out}/eval_summary.json`, JSON.stringify({ skill, split, n, hard: score }, null, 2) + '\n');
  state.files.set(`${out}/predictions.jsonl`, '');
  return (
    warn +
    `eval summary: ${out}/eval_summary.json\n` +
    `${split} hard ${score.toFixed(3)} over ${n} tasks\n` +
    `skill: ${skill}\n` +
    `config: ${config} (${models})`
  );
}

/** Runs one command line in the virtual repository; a failure is a ShellError (and recorded). */
export function runCommand(state: RepoState, cmd: string): string {
  const rec: CommandRecord = { cmd, kind: 'unknown', ok: false };
  state.commands.push(rec);
  try {
    let w = words(cmd);
    // `source .venv/bin/activate && …`: the environment is always active here
    if (w[0] === 'source' || w[0] === '.') {
      const and = w.indexOf('&&');
      rec.kind = 'shell';
      if (and < 0) {
        rec.ok = true;
        return '';
      }
      w = w.slice(and + 1);
    }
    const [head, ...rest] = w;
    let out: string;
    if (head === undefined) throw new ShellError('run_command: empty command');
    if (head === 'ls') {
      rec.kind = 'shell';
      out = listDir(state, rest[0] ?? '.');
    } else if (head === 'cat') {
      rec.kind = 'shell';
      if (!rest[0]) throw new ShellError('cat: missing file operand');
      out = readFile(state, rest[0]);
    } else if (head === 'python3' || head === 'python') {
      const script = normalize(rest[0] ?? '');
      if (script === 'scripts/train.py' || script === 'scripts/eval_only.py') {
        rec.kind = script === 'scripts/train.py' ? 'train' : 'eval';
        out = entryPoint(state, rec, rec.kind, rest.slice(1));
      } else throw new ShellError(`${head}: can't open file '${script}': No such file or directory`);
    } else {
      throw new ShellError(
        `bash: ${head}: command not found (this shell runs python3 scripts/train.py, python3 scripts/eval_only.py, ls, cat)`,
      );
    }
    rec.ok = true;
    return out;
  } catch (e) {
    if (e instanceof ShellError) rec.error = e.message;
    throw e;
  }
}
