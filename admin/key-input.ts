/**
 * A key read from standard input (`npm run keys -- id|revoke --key-stdin`), never from the command line, which
 * shells keep in their history and `ps` and npm print. Piped or redirected, the input is read whole (at most
 * 1 KiB: one key and its newline); typed or pasted at a terminal, one line is read with the echo off, so the
 * key does not show on the screen either.
 */
import { UsageError } from '../cli/kit.js';
import { API_KEY_PATTERN } from '../tables/keys.js';

/** Standard input as the CLI reads it (process.stdin; a stream in tests). */
export type KeyInput = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };

const MAX_BYTES = 1024;

/** One line typed at a terminal, not echoed; Ctrl-C gives up. */
function typedLine(input: KeyInput): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed = '';
    const done = (error?: Error) => {
      input.removeListener('data', onData);
      input.setRawMode?.(false);
      input.pause();
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of String(chunk)) {
        if (char === '\u0003') return done(new UsageError('no key read (Ctrl-C)'));
        if (char === '\r' || char === '\n' || char === '\u0004') return done();
        if (char === '\u007f') typed = typed.slice(0, -1);
        else typed += char;
        if (typed.length > MAX_BYTES) return done();
      }
      return undefined;
    };
    input.setRawMode?.(true);
    input.on('data', onData);
    input.resume();
  });
}

/** Everything piped in, up to MAX_BYTES (more is not a key). */
async function pipedText(input: KeyInput): Promise<string> {
  let text = '';
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    text += String(chunk);
    if (text.length > MAX_BYTES) break;
  }
  return text;
}

/**
 * The key on standard input, checked against the key's wire format; a UsageError that never shows what was read
 * otherwise. `prompt` is said first when the input is a terminal.
 * @example const key = await readKey(process.stdin, (text) => process.stderr.write(text));
 */
export async function readKey(input: KeyInput, prompt: (text: string) => void): Promise<string> {
  let text: string;
  if (input.isTTY) {
    prompt('Paste the key, then press Enter (it is not shown).');
    text = await typedLine(input);
  } else text = await pipedText(input);
  const key = text.trim();
  if (!API_KEY_PATTERN.test(key)) {
    throw new UsageError(
      text.trim() === ''
        ? 'standard input holds no key: pipe it in (… | npm run keys -- …) or paste it when asked'
        : 'standard input must hold one key as the API takes it: its prefix, then 22 base64url characters (what it holds is not shown)',
    );
  }
  return key;
}
