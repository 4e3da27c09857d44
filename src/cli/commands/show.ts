/**
 * `skillopt show <dir>`: a run folder's facts in the terminal (what ran, headline figures, the step curve,
 * the worst cases, the paths to open next) — the terminal twin of report.html. A folder that is not a
 * run is a one-line error (exit 2).
 */
import { SkillOptError } from '../../util/errors.ts';
import { defineCommand, helpText, parseFlags } from '../args.ts';
import type { Command } from '../command.ts';
import { outputColumns, printOut } from '../../util/print.ts';

const SPEC = defineCommand({
  name: 'show',
  operands: '<dir>',
  flags: {
    case: {
      type: 'string',
      arg: 'ID',
      help: "print that case's record instead (each trial), with its trajectory as a timeline",
    },
  },
  about: `  Prints what a run folder holds: the command, config, skill, model (simulated or not), the headline
  figures, for an optimize run the validation pass rate per step as a text chart, the worst cases,
  a comparison's regressed and fixed cases, and the files to open next (report.html first).`,
});

export const command: Command = {
  usage: helpText(SPEC),
  async run(argv) {
    const { values, positionals: dirs } = parseFlags(SPEC, argv);
    if (dirs.length !== 1)
      throw new SkillOptError(
        dirs.length === 0
          ? 'show needs a run folder: skillopt show <dir>'
          : `show takes one folder, got ${dirs.length}: ${dirs.join(' ')}`,
      );
    const { showCase, showRun } = await import('../../report/show.ts');
    const text =
      values.case !== undefined
        ? showCase(dirs[0]!, values.case, { width: outputColumns() })
        : showRun(dirs[0]!, { width: outputColumns() });
    printOut(text);
    return 0;
  },
};
