/** A skill with one rule per trigger of the mini fixture: it solves every mini task on the simulated model. */
export const MINI_ORACLE_SKILL = `# Incident triage (oracle)

Read the log line and name the failing subsystem with one word.

- When the input mentions \`ENOSPC\`, answer \`disk\`.
- When the input mentions \`DiskQuotaExceeded\`, answer \`disk\`.
- When the input mentions \`ECONNRESET\`, answer \`network\`.
- When the input mentions \`SocketTimeout\`, answer \`network\`.
- When the input mentions \`InvalidToken\`, answer \`auth\`.
- When the input mentions \`HTTP401\`, answer \`auth\`.
- When the input mentions \`OutOfMemoryError\`, answer \`memory\`.
- When the input mentions \`HeapExhausted\`, answer \`memory\`.
- When the input mentions \`MissingSetting\`, answer \`config\`.
- When the input mentions \`YamlParseError\`, answer \`config\`.
`;
