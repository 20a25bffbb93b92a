/**
 * A key read from standard input (admin/key-input.ts): piped whole, or typed at a terminal with the echo off
 * (raw mode, one line, Ctrl-C gives up); anything but one key is refused without being shown.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type KeyInput, readKey } from '../../admin/key-input.js';

// A key of nothing, made up for this test.
const KEY = 'pk_live_KeyInputTestKey0123456';

function piped(text: string | Buffer): KeyInput {
  const stream = new PassThrough();
  stream.end(text);
  return stream;
}

/** A terminal: raw mode recorded, what is typed arriving a character at a time. */
function terminal(typed: string) {
  const stream = new PassThrough() as PassThrough & KeyInput;
  const modes: boolean[] = [];
  stream.isTTY = true;
  stream.setRawMode = (raw: boolean) => modes.push(raw);
  setImmediate(() => {
    for (const char of typed) stream.write(char);
  });
  return { stream, modes };
}

const refusal = (input: KeyInput) =>
  readKey(input, () => {}).then(
    () => '',
    (error: Error) => error.message,
  );

describe('a key on standard input', () => {
  it('piped, with or without its newline and spaces around', async () => {
    for (const text of [KEY, `${KEY}\n`, `  ${KEY}\r\n`])
      expect(await readKey(piped(text), () => {})).toBe(KEY);
  });

  it('typed at a terminal: one line, the echo off while it is typed and on again after; a prompt first', async () => {
    const { stream, modes } = terminal(`${KEY}x\u007f\r`);
    const prompts: string[] = [];

    const key = await readKey(stream, (text) => prompts.push(text));

    expect(key).toBe(KEY);
    expect(modes).toEqual([true, false]);
    expect(prompts).toEqual(['Paste the key, then press Enter (it is not shown).']);
  });

  it('Ctrl-C at the terminal gives up, the echo on again', async () => {
    const { stream, modes } = terminal('pk_li\u0003');

    expect(await refusal(stream)).toBe('no key read (Ctrl-C)');
    expect(modes).toEqual([true, false]);
  });

  it.each([
    ['nothing', ''],
    ['a key id', 'key_3fG7xQ2mPa'],
    ['a key one character short', KEY.slice(0, -1)],
    ['two keys', `${KEY}\n${KEY}`],
    ['a key and more', `${KEY} please`],
    ['far too much', 'x'.repeat(100_000)],
  ])('%s: refused, what was read never shown', async (_, text) => {
    const message = await refusal(piped(text));

    expect(message).toMatch(/^standard input (holds no key|must hold one key)/);
    expect(message).not.toContain(KEY.slice(8, 20));
    expect(message).not.toContain('xxxx');
  });
});
