/** The `skillopt` dispatcher: a mistyped command is one line with the nearest command, exit 2. */
import { expect, test } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { SkillOptError } from '../../src/util/errors.ts';

async function refusal(argv: string[]): Promise<SkillOptError> {
  const e = await main(argv).then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SkillOptError);
  return e as SkillOptError;
}

test('an unknown command: one line naming it, with a did-you-mean when a command is near, exit 2', async () => {
  const near = await refusal(['evl', '--split', 'test']);
  expect(near.exitCode).toBe(2);
  expect(near.message).toBe("unknown command 'evl' (did you mean eval?); see skillopt --help");
  expect((await refusal(['sim-sever'])).message).toBe("unknown command 'sim-sever' (did you mean sim-server?); see skillopt --help");
  expect((await refusal(['frobnicate'])).message).toBe("unknown command 'frobnicate'; see skillopt --help");
});
