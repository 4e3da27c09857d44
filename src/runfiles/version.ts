/**
 * The format version every run file carries as `schema_version`. A file without the field was written
 * before files carried it and reads as version 1, today's format (docs/schemas/README.md).
 */
import { z } from 'zod';

export const SCHEMA_VERSION = 1;

/** `schema_version` of a run file: absent reads as 1; any other number is a format this build cannot read. */
export const schemaVersion = z.literal(SCHEMA_VERSION).optional();

const num = z.number();
/** A 0..1 score or rate; null when nothing was scored. */
export const rate = num.nullable();
/** A confidence interval `[low, high]`, null when it cannot be computed. */
export const interval = z.tuple([num, num]).nullable();
