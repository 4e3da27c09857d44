/** Configuration errors: always one line naming the file (or flag / env var) and the key path at fault. */
import { SkillOptError } from '../util/errors.ts';

export class ConfigError extends SkillOptError {
  constructor(message: string, options?: { cause?: unknown; exitCode?: number }) {
    // Guarantee the one-line contract even if a caller passes a multi-line reason.
    super(message.replace(/\s*\n\s*/g, ' ').trim(), options);
  }
}
