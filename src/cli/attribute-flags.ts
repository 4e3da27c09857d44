/** The attribution flags `compare` and `test --baseline` share, and their checks (docs/attribution.md). */
import { UNIT_GRANULARITIES, type UnitGranularity } from '../skill/units.ts';
import { SkillOptError } from '../util/errors.ts';
import type { Flag } from './args.ts';

export const ATTRIBUTE_FLAGS = {
  'attribute-granularity': {
    type: 'string',
    arg: UNIT_GRANULARITIES.join('|'),
    default: 'block',
    help: 'what one part of the change is: a markdown block, a line or a diff hunk',
  },
  'attribute-budget': {
    type: 'number',
    arg: 'N',
    help: 'model calls the attribution may make (default: per changed case, a reproduction, a search and a confirmation; docs/attribution.md#budget)',
  },
  'baseline-skill': {
    type: 'string',
    arg: 'FILE',
    help: "--attribute: the baseline's skill file, when its run does not record it (checked against the run's skill hash)",
  },
} as const satisfies Record<string, Flag>;

/** The granularity and call budget of `--attribute`, checked: one line naming the flag when either is wrong. */
export function attributeSettings(
  granularityArg: string | undefined,
  budget: number | undefined,
): { granularity: UnitGranularity; budget: number | null } {
  const granularity = (granularityArg ?? 'block') as UnitGranularity;
  if (!UNIT_GRANULARITIES.includes(granularity))
    throw new SkillOptError(
      `--attribute-granularity must be one of ${UNIT_GRANULARITIES.join(', ')}, got '${granularity}'`,
    );
  if (budget !== undefined && !(Number.isInteger(budget) && budget >= 0))
    throw new SkillOptError(`--attribute-budget must be a whole number of calls, got ${budget}`);
  return { granularity, budget: budget ?? null };
}
