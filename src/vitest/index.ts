/** `skillopt/vitest`: the Vitest plugin (main-process side). Every export is listed in docs/api.md. */
export { skillopt, type SkillOptPluginOptions } from './plugin.ts';
