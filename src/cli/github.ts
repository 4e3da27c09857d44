/**
 * GitHub Actions output: the job's step summary (markdown appended to $GITHUB_STEP_SUMMARY) and workflow
 * annotations (`::error file=…,line=…::…` lines that GitHub pins to the file in a PR). Both are written
 * only inside Actions; everything passes through redactText like any other output.
 */
import { appendFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { redactText } from '../util/redact.ts';
import { escapeControls } from '../util/control-chars.ts';
import { printErr, printOut } from '../util/print.ts';
import { currentEnv } from '../util/io-context.ts';

/** Append markdown to the step summary when $GITHUB_STEP_SUMMARY names a file; a failure is a warning, never fatal. */
export function appendStepSummary(markdown: string, env: NodeJS.ProcessEnv = currentEnv()): void {
  const file = env.GITHUB_STEP_SUMMARY;
  if (!file) return;
  try {
    // model text in the tables and lines: its control characters shown, its newlines and tabs kept
    const text = escapeControls(markdown);
    appendFileSync(file, `${redactText(text.endsWith('\n') ? text : `${text}\n`)}\n`);
  } catch (e) {
    printErr(`[skillopt] warning: could not append to GITHUB_STEP_SUMMARY (${file}): ${(e as Error).message}`);
  }
}

/** Escape a workflow-command value (data: %, CR, LF; properties also : and ,); other control characters are shown as `\x1b`. */
const escapeData = (s: string) => escapeControls(s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A'));
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

export interface Annotation {
  level: 'error' | 'warning' | 'notice';
  /** `path:line:column` (absolute or relative) or null. */
  site: string | null;
  title: string;
  message: string;
}

/** One workflow command; the site's path is made relative to the workspace, as GitHub expects. */
export function annotationLine(a: Annotation, cwd = process.cwd()): string {
  const props: string[] = [];
  const m = a.site ? /^(.*):(\d+):(\d+)$/.exec(a.site) : null;
  if (m) {
    props.push(`file=${escapeProperty(relative(cwd, m[1]!).split(sep).join('/'))}`, `line=${m[2]}`, `col=${m[3]}`);
  }
  props.push(`title=${escapeProperty(a.title)}`);
  return `::${a.level} ${props.join(',')}::${escapeData(a.message)}`;
}

/** Print annotations when running in GitHub Actions. */
export function printAnnotations(list: Annotation[], env: NodeJS.ProcessEnv = currentEnv()): void {
  if (env.GITHUB_ACTIONS !== 'true') return;
  for (const a of list) printOut(annotationLine(a));
}
