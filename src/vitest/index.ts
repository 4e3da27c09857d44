/** `skillopt/vitest`: the Vitest plugin and reporter (main-process side). */
export { skillopt, type SkillOptPluginOptions } from './plugin.ts';
export { SkillReporter, collectRun, renderTable, writeRunFiles } from './reporter.ts';
export type { ProvidedSession, GateVerdict, SuiteManifest } from '../contract/session.ts';
