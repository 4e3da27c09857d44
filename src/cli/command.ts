/** One `skillopt` command, as ./commands/* export it and main.ts dispatches to it. */
export interface Command {
  usage: string;
  run(argv: string[]): Promise<number>;
}
