/** The short report every command ends with. */
import { displayPath } from '../util/paths.ts';
import pc from 'picocolors';
import { exactCommand } from '../util/command-line.ts';
import { redactText } from '../util/redact.ts';
import { escapeControls } from '../util/control-chars.ts';
import { printOut } from '../util/print.ts';

export interface EndReport {
  title: string;
  ok: boolean;
  /** An inconclusive run (errored cases beyond evaluation.max_errored): neither OK nor FAILED. */
  inconclusive?: boolean;
  outDir: string | null;
  skill?: { label: string; path: string };
  metrics: Array<[string, string]>;
  next: string;
  /** The first concrete failure point, one line. */
  failure?: string | null;
  /** After the status, when two verdicts were reached: which one decided it and which did not (`skillopt test --baseline`). */
  decidedBy?: string | null;
  /** After the status, in parentheses: what the status does not say (`1 train case lost: …`). */
  caveat?: string | null;
  simulated: boolean;
}

/** The report's lines, redacted (util/redact.ts): no URL credential or registered secret is printed. */
export function renderEndReport(r: EndReport): string {
  const status = r.ok ? pc.green('OK') : r.inconclusive ? pc.magenta('INCONCLUSIVE') : pc.red('FAILED');
  const lines = [
    '',
    `${pc.bold(r.title)} ${status}${r.caveat ? ` (${escapeControls(r.caveat, { layout: false })})` : ''}${r.decidedBy ? ` ${r.decidedBy}` : ''}${r.simulated ? pc.yellow(' — simulated model') : ''}`,
    `  command:  ${exactCommand()}`,
  ];
  if (r.outDir) lines.push(`  output:   ${displayPath(r.outDir)}`);
  if (r.skill) lines.push(`  ${`${r.skill.label}:`.padEnd(9)} ${displayPath(r.skill.path)}`);
  for (const [k, v] of r.metrics) lines.push(`  ${`${k}:`.padEnd(9)} ${escapeControls(v, { layout: false })}`);
  if (r.failure)
    lines.push(
      `  ${r.inconclusive ? pc.magenta('why:') + '     ' : pc.red('failure:') + ' '} ${escapeControls(r.failure, { layout: false })}`,
    );
  lines.push(`  next:     ${escapeControls(r.next, { layout: false })}`);
  return redactText(lines.join('\n'));
}

export function printEndReport(r: EndReport): void {
  printOut(renderEndReport(r));
}
