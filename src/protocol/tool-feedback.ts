/**
 * The wording of a tool-call scorer's feedback, one finding per line, so that the analyst (a real model, or
 * the simulated one, which parses these lines) learns which call was missing, extra or wrong:
 *
 *   missing call: read_file {"path":"logs/run.txt"}
 *   wrong arguments: run_command {"cmd":"ls"} (expected {"cmd":"python train.py"})
 *   extra call: list_dir {"path":"."}
 *   out of order: run_command {"cmd":"…"} (expected after read_file)
 *
 * Arguments are compact JSON (`JSON.stringify`). Imports nothing (see the architecture test).
 */

export type CallFinding =
  | { kind: 'missing'; name: string; args: unknown }
  | { kind: 'wrong'; name: string; args: unknown; expected: unknown }
  | { kind: 'extra'; name: string; args: unknown }
  | { kind: 'order'; name: string; args: unknown; after: string };

const json = (v: unknown) => (v === undefined ? '{}' : JSON.stringify(v));

export function formatCallFinding(f: CallFinding): string {
  switch (f.kind) {
    case 'missing':
      return `missing call: ${f.name} ${json(f.args)}`;
    case 'wrong':
      return `wrong arguments: ${f.name} ${json(f.args)} (expected ${json(f.expected)})`;
    case 'extra':
      return `extra call: ${f.name} ${json(f.args)}`;
    case 'order':
      return `out of order: ${f.name} ${json(f.args)} (expected after ${f.after})`;
  }
}

const LINE_RE =
  /^(missing call|wrong arguments|extra call|out of order): ([A-Za-z0-9_.-]+) (.+?)(?: \(expected (?:after ([A-Za-z0-9_.-]+)|(.+))\))?$/;

const parse = (s: string): unknown => {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
};

/** Every finding in a feedback text (lines that are not findings are skipped). */
export function parseCallFindings(feedback: string): CallFinding[] {
  const out: CallFinding[] = [];
  for (const raw of feedback.split('\n')) {
    const m = LINE_RE.exec(raw.trim());
    if (!m) continue;
    const [, label, name, args, after, expected] = m as unknown as [
      string,
      string,
      string,
      string,
      string | undefined,
      string | undefined,
    ];
    if (label === 'missing call') out.push({ kind: 'missing', name, args: parse(args) });
    else if (label === 'extra call') out.push({ kind: 'extra', name, args: parse(args) });
    else if (label === 'wrong arguments' && expected !== undefined)
      out.push({ kind: 'wrong', name, args: parse(args), expected: parse(expected) });
    else if (label === 'out of order' && after !== undefined)
      out.push({ kind: 'order', name, args: parse(args), after });
  }
  return out;
}
