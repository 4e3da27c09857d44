/** The command line a run was started with, as a user would retype it (shown in reports and lock files). */
import { commandArgv } from './io-context.ts';
import { isSecretKey, maskUrlCredentials, redactValue } from './redact.ts';

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** A `key=value` argument whose key names a secret (`model.azure_openai_api_key=…`) shows it redacted. */
function redactArg(arg: string): string {
  const eq = arg.indexOf('=');
  if (eq > 0) {
    const key = arg.slice(0, eq);
    const value = arg.slice(eq + 1);
    if (value && isSecretKey(key.split('.').pop()!.replace(/^-+/, ''))) return `${key}=${redactValue(value)}`;
  }
  return maskUrlCredentials(arg);
}

/** The command as typed (program name normalised to `npx skillopt`), secrets redacted; default: the one being run. */
export function exactCommand(argv: readonly string[] = commandArgv() ?? process.argv.slice(2)): string {
  return ['npx', 'skillopt', ...argv.map((a) => quote(redactArg(a)))].join(' ');
}
