/**
 * The `npx skillopt …` commands of a markdown document, for test/e2e/readme.test.ts, which runs the
 * commands of the README and of the docs/ pages so that they cannot rot.
 *
 * - Every fenced code block is read. In a shell block (```bash, sh, shell, zsh, console) a line whose
 *   first word is `npx skillopt` (or `skillopt`), after an optional `$ ` prompt and `NAME=value`
 *   assignments, is a command; backslash-continued lines are joined and a trailing `&` runs it in the
 *   background. Comments and other programs (`npm ci`, `git apply …`) are ignored.
 * - Anything this cannot run as written is a *problem*, reported rather than skipped: a skillopt command
 *   inside a pipeline, `&&` chain, substitution or redirection; shell syntax the word splitter does not
 *   implement (globs, `$VAR`, …); a line starting with `npx skillopt` in a block that is not a shell block
 *   (a CI workflow's YAML, sample output with a command at the start of a line); an unknown marker.
 * - The one way to opt a block out is a marker on the line before its fence (blank lines may separate
 *   them): `<!-- readme-test: skip (why it cannot run offline) -->`. A block whose commands are meant to
 *   fail says so with `<!-- readme-test: exit N -->` (default: every command exits 0).
 * - A sample of what a command prints is marked `<!-- readme-test: output -->`: the block is compared with
 *   the output of the last command of the block before it that has commands (see sampleComparison).
 * - A section about the user's own project: `<!-- readme-test: file PATH -->` says a block is the content of
 *   PATH in that project, and a shell block marked `<!-- readme-test: in-project -->` runs there, in a temp
 *   project holding every `file` block before it, rather than from the repository root.
 */

export interface ReadmeCommand {
  /** The document it is in (README.md, docs/NAME.md). */
  doc: string;
  /** 1-based line of the command's first line. */
  line: number;
  /** The command as written (continuation lines joined). */
  text: string;
  /** `NAME=value` assignments in front of the command. */
  env: Record<string, string>;
  /** The words after `skillopt`: the subcommand and its arguments. */
  args: string[];
  /** Written with a trailing `&`. */
  background: boolean;
}

export interface ReadmeBlock {
  /** The document it is in (README.md, docs/NAME.md). */
  doc: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** The reason from a `skip` marker, or null. */
  skip: string | null;
  /** The exit code every foreground command of the block must end with. */
  exit: number;
  /** The block is a sample of the output of the last command before it (an `output` marker). */
  output: { of: ReadmeCommand; text: string } | null;
  /** The block is this file of the user's project (a `file PATH` marker): its path and content. */
  file: { path: string; text: string } | null;
  /** Its commands run in the user's project (an `in-project` marker), not from the repository root. */
  inProject: boolean;
  commands: ReadmeCommand[];
}

export interface ReadmeCommands {
  blocks: ReadmeBlock[];
  /** `README.md:<line>: …` for everything the test does not know how to run. */
  problems: string[];
}

const SHELL_LANGS = new Set(['bash', 'sh', 'shell', 'zsh', 'console']);
const MARKER = /^\s*<!--\s*readme-test:\s*(.*?)\s*-->\s*$/;
const MARKER_HINT = 'mark the block with <!-- readme-test: skip (reason) --> if it cannot run offline';

/** Shell words of one logical line, for the subset of POSIX sh a README command needs. */
export function shellWords(line: string): { words: string[]; background: boolean } | { error: string } {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let background = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (background) {
      if (/\s/.test(c)) continue;
      if (c === '#') break;
      return { error: "'&' in the middle of a line" };
    }
    if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    if (c === '#' && !inWord) break; // a comment
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return { error: 'an unterminated single quote' };
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        const d = line[j]!;
        if (d === '$' || d === '`') return { error: `'${d}' (an expansion) inside double quotes` };
        if (d === '\\' && j + 1 < line.length && '"\\$`'.includes(line[j + 1]!)) {
          word += line[++j];
          continue;
        }
        word += d;
      }
      if (j >= line.length) return { error: 'an unterminated double quote' };
      inWord = true;
      i = j;
      continue;
    }
    if (c === '\\') {
      if (i + 1 >= line.length) return { error: 'a trailing backslash' };
      word += line[++i];
      inWord = true;
      continue;
    }
    if (c === '&') {
      if (line[i + 1] === '&') return { error: "'&&'" };
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      background = true;
      continue;
    }
    if (c === '~' && !inWord) return { error: "'~' (home directory expansion)" };
    if ('|;<>()$`*?[]{}'.includes(c)) return { error: `'${c}'` };
    word += c;
    inWord = true;
  }
  if (inWord) words.push(word);
  return { words, background };
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

/** The blocks and commands of `markdown`, and the problems that keep a command from being run. */
export function readmeCommands(markdown: string, file = 'README.md'): ReadmeCommands {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  const problems: string[] = [];
  const at = (n: number) => `${file}:${n}`;
  // The marker waiting for the next fence: its directives and the line it was on.
  let pending: {
    line: number;
    skip: string | null;
    exit: number | null;
    output: boolean;
    file: string | null;
    inProject: boolean;
  } | null = null;
  let lastCommand: ReadmeCommand | null = null;

  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const marker = MARKER.exec(text);
    if (marker) {
      if (pending) problems.push(`${at(pending.line)}: a readme-test marker that no code block follows`);
      pending = { line: i + 1, skip: null, exit: null, output: false, file: null, inProject: false };
      for (const directive of marker[1]!.split(/\s*;\s*/).filter(Boolean)) {
        const skip = /^skip\s*\((.*\S.*)\)$/.exec(directive);
        const exit = /^exit\s+(\d+)$/.exec(directive);
        if (skip) pending.skip = skip[1]!.trim();
        else if (exit) pending.exit = Number(exit[1]);
        else if (directive === 'output') pending.output = true;
        else if (directive === 'in-project') pending.inProject = true;
        else if (/^file\s+[\w.][\w./-]*$/.test(directive) && !directive.includes('..'))
          pending.file = directive.replace(/^file\s+/, '');
        else
          problems.push(
            `${at(i + 1)}: unknown readme-test marker '${directive}' (expected 'skip (reason)', 'exit N', 'output', 'file PATH' or 'in-project')`,
          );
      }
      continue;
    }
    const fence = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(text);
    if (!fence) {
      if (pending && text.trim() !== '') {
        problems.push(
          `${at(pending.line)}: a readme-test marker must be followed by a code block (blank lines only in between)`,
        );
        pending = null;
      }
      continue;
    }
    // A fenced block: find its end (the same fence character, at least as long).
    const open = fence[2]!;
    let end = i + 1;
    while (
      end < lines.length &&
      !new RegExp(`^\\s*${open[0] === '`' ? '`' : '~'}{${open.length},}\\s*$`).test(lines[end]!)
    )
      end++;
    const body = lines.slice(i + 1, end);
    const block: ReadmeBlock = {
      doc: file,
      line: i + 1,
      lang: fence[3]!.toLowerCase(),
      skip: pending?.skip ?? null,
      exit: pending?.exit ?? 0,
      output: null,
      file: pending?.file ? { path: pending.file, text: `${body.join('\n')}\n` } : null,
      inProject: pending?.inProject ?? false,
      commands: [],
    };
    if (pending?.output) {
      if (lastCommand === null) problems.push(`${at(pending.line)}: an output sample with no command before it`);
      else block.output = { of: lastCommand, text: body.join('\n') };
    }
    pending = null;
    const shell = SHELL_LANGS.has(block.lang);
    for (let j = 0; j < body.length; j++) {
      const first = i + 2 + j; // 1-based line of body[j]
      let logical = body[j]!;
      while (/\\\s*$/.test(logical) && j + 1 < body.length)
        logical = logical.replace(/\\\s*$/, ' ') + body[++j]!.trimStart();
      const stripped = logical.trim().replace(/^\$\s+/, '');
      if (!shell) {
        if (/^npx\s+skillopt\b/.test(stripped) && block.skip === null) {
          problems.push(
            `${at(first)}: \`${oneLine(stripped)}\` is in a \`\`\`${block.lang || '(no language)'} block, not a shell block: ` +
              `label it \`\`\`bash to have it run, or ${MARKER_HINT}`,
          );
        }
        continue;
      }
      if (stripped === '' || stripped.startsWith('#')) continue;
      // skillopt run by npx anywhere on the line, or as the command after a separator (`x && skillopt …`)
      const mentions = /\bnpx\s+(-\S+\s+)*skillopt\b/.test(stripped) || /(^|[;&|(`]\s*)skillopt(\s|$)/.test(stripped);
      const parsed = shellWords(stripped);
      if ('error' in parsed) {
        if (mentions && block.skip === null)
          problems.push(
            `${at(first)}: cannot run \`${oneLine(stripped)}\`: ${parsed.error} is not supported; ${MARKER_HINT}`,
          );
        continue;
      }
      const words = [...parsed.words];
      const env: Record<string, string> = {};
      while (words.length > 0 && ASSIGNMENT.test(words[0]!)) {
        const [, name, value] = ASSIGNMENT.exec(words.shift()!)!;
        env[name!] = value!;
      }
      let args: string[] | null = null;
      if (words[0] === 'skillopt') args = words.slice(1);
      else if (words[0] === 'npx') {
        let k = 1;
        while (k < words.length && words[k]!.startsWith('-')) k++;
        if (words[k] === 'skillopt') args = words.slice(k + 1);
      }
      if (args === null) {
        if (mentions && block.skip === null)
          problems.push(
            `${at(first)}: cannot run \`${oneLine(stripped)}\`: skillopt is not the command of this line; ${MARKER_HINT}`,
          );
        continue;
      }
      if (args.length === 0 && block.skip === null) {
        problems.push(`${at(first)}: \`${oneLine(stripped)}\` names no skillopt command`);
        continue;
      }
      block.commands.push({
        doc: file,
        line: first,
        text: oneLine(stripped),
        env,
        args,
        background: parsed.background,
      });
    }
    if (block.inProject && !shell) problems.push(`${at(block.line)}: an in-project block must be a shell block`);
    if (block.skip === null && block.commands.some((c) => !c.background))
      lastCommand = block.commands.filter((c) => !c.background).at(-1)!;
    blocks.push(block);
    i = end;
  }
  if (pending) problems.push(`${at(pending.line)}: a readme-test marker that no code block follows`);
  return { blocks, problems };
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** What differs between runs of the same command, and is not compared: it is masked in both texts. */
function masked(line: string): string {
  // durations ("3.4 s", "2.7 s", latencies "6 ms"): wall time depends on the machine
  return line.replace(/\b\d+(?:\.\d+)? m?s\b/g, (m) => (m.endsWith('ms') ? '# ms' : '# s'));
}

/**
 * A README sample of a command's output against the output of a real run, as two texts for a diff:
 * `expected` is the sample, `actual` the run's lines from the one that matches the sample's first line on.
 * Not compared: durations (`N s`, `N ms`), the run's output folder (the sample's `output:` path stands for the real
 * one) and the arguments the test added to the command (`added`, dropped from the run's echo of it); `…`
 * in a sample line matches any text. Every other character, numbers included, must agree.
 */
export function sampleComparison(
  sample: string,
  run: string,
  { outDir, added }: { outDir?: string; added: string[] },
): { expected: string; actual: string } {
  const sampleLines = sample.replace(/\n+$/, '').split('\n');
  let text = run.replace(/\x1b\[[0-9;]*m/g, '');
  if (added.length > 0) text = text.split(` ${added.join(' ')}`).join('');
  const sampleOut = /^\s*output:\s+(\S+)/m.exec(sample)?.[1];
  if (outDir && sampleOut) text = text.split(outDir).join(sampleOut);
  const runLines = text.replace(/\n+$/, '').split('\n');
  const wildcard = (line: string) =>
    new RegExp(
      `^${masked(line)
        .split('…')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
  const matches = (sampleLine: string) => (l: string) => wildcard(sampleLine).test(masked(l));
  // the run's lines from the one that matches the sample's first line to the one that matches its last
  let start = runLines.findIndex(matches(sampleLines[0]!));
  if (start < 0) start = Math.max(0, runLines.length - sampleLines.length);
  const last = runLines.slice(start).findIndex(matches(sampleLines.at(-1)!));
  const actual = runLines.slice(start, last >= 0 ? start + last + 1 : start + sampleLines.length).map(masked);
  // a sample line with `…` is shown as the run's line it matches, so the diff shows real differences only
  const expected = sampleLines.map((l) => (l.includes('…') ? actual.find(matches(l)) : undefined) ?? masked(l));
  return { expected: expected.join('\n'), actual: actual.join('\n') };
}
