/**
 * `skillopt report <dir>`: regenerate a run folder's report.html (test, eval, optimize) and, when the
 * folder holds a comparison, compare.html — from the folder's files, offline. Every run writes its report
 * itself; this is for a folder whose report is missing, older than the run (a resumed run) or was made by
 * an older skillopt. A folder that is not a run is a one-line error (exit 2).
 */
import { SkillOptError } from '../../util/errors.ts';
import { displayPath } from '../../util/paths.ts';
import { defineCommand, helpText, parseFlags } from '../args.ts';
import type { Command } from '../command.ts';
import { printOut } from '../../util/print.ts';

const SPEC = defineCommand({
  name: 'report',
  operands: '<dir>',
  flags: {},
  about: `  Writes <dir>/report.html for a test, eval or optimize run folder (and <dir>/compare.html when the
  folder holds compare.json): one self-contained file (no server, no network) with the step curve,
  the per-case table with filters, the skill diff, regressions first for a comparison.
  The terminal view of the same facts: skillopt show <dir>.`,
});

export const command: Command = {
  usage: helpText(SPEC),
  async run(argv) {
    const dirs = parseFlags(SPEC, argv).positionals;
    if (dirs.length !== 1)
      throw new SkillOptError(
        dirs.length === 0
          ? 'report needs a run folder: skillopt report <dir>'
          : `report takes one folder, got ${dirs.length}: ${dirs.join(' ')}`,
      );
    const { regenerateReports } = await import('../../report/index.ts');
    const started = performance.now();
    const written = regenerateReports(dirs[0]!);
    const ms = Math.round(performance.now() - started);
    for (const file of written) printOut(`[skillopt] wrote ${displayPath(file)}`);
    printOut(`[skillopt] ${written.length} report(s) in ${ms} ms; open in a browser (a single file, nothing fetched)`);
    return 0;
  },
};
