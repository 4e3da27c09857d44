/**
 * The environment of a command a test runs, spawned or in process: this process's without Vitest,
 * skillopt or API-key variables (a command must not see the test runner's, nor a developer's key), with
 * colours and the model-call cache off (a cache left in a fixture folder by an earlier run would answer the
 * calls whose requests and counts the tests check), then `extra`.
 */
const INHERITED_OUT =
  /^(VITEST|VITE_|SKILLOPT_|OPENAI_|TARGET_OPENAI|OPTIMIZER_OPENAI|JUDGE_OPENAI|AZURE_|FORCE_COLOR|NODE_OPTIONS|NODE_ENV|TEST$)/;

export function commandEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!INHERITED_OUT.test(k)) env[k] = v;
  return { ...env, NO_COLOR: '1', SKILLOPT_CACHE: 'off', ...extra };
}
