import { describe, expect, test } from 'vitest';
import { HeldOutput } from '../../src/cli/held-output.ts';

/** A stand-in for process.stdout: records what reaches it. */
function target(isTTY: boolean) {
  const written: string[] = [];
  const stream = {
    isTTY,
    columns: 120,
    rows: 40,
    write: (chunk: string | Uint8Array) => (written.push(String(chunk)), true),
  };
  return { written, stream: stream as unknown as NodeJS.WriteStream };
}

const write = (s: NodeJS.WritableStream, text: string) => new Promise<void>((r) => s.write(text, () => r()));

describe('HeldOutput', () => {
  test('holds both streams until released, then writes what it held in order and lets the rest through', async () => {
    const out = target(false);
    const err = target(false);
    const held = new HeldOutput(out.stream, err.stream);
    await write(held.stdout, 'banner\n');
    await write(held.stderr, 'warning\n');
    expect(out.written).toEqual([]);
    expect(err.written).toEqual([]);
    expect(held.released).toBe(false);
    held.release();
    expect(out.written).toEqual(['banner\n']);
    expect(err.written).toEqual(['warning\n']);
    await write(held.stdout, 'table\n');
    expect(out.written).toEqual(['banner\n', 'table\n']);
    expect(held.released).toBe(true);
  });

  test('discard drops what was held; what follows goes through', async () => {
    const out = target(false);
    const held = new HeldOutput(out.stream, target(false).stream);
    await write(held.stdout, 'FAIL block\n');
    held.discard();
    held.release(); // nothing left to write
    await write(held.stdout, 'after\n');
    expect(out.written).toEqual(['after\n']);
  });

  test("reports the terminal's isTTY and size, as Vitest's logger reads them", () => {
    const held = new HeldOutput(target(true).stream, target(false).stream);
    const tty = held.stdout as unknown as { isTTY: boolean; columns: number; rows: number };
    expect([tty.isTTY, tty.columns, tty.rows]).toEqual([true, 120, 40]);
    expect((held.stderr as unknown as { isTTY: boolean }).isTTY).toBe(false);
  });
});
