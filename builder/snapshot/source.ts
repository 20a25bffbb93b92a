/**
 * Where a snapshot's four files come from: a directory (`--source`, `npm start`), or files already in memory
 * (an uploaded archive, builder/upload/archive.ts). Both are read the same way and give the same digest.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type ParseError, parse as parseJsonc } from 'jsonc-parser';
import type { SyntaxFault } from './elements.js';
import { Locator, notUtf8At } from './exact.js';
import { META_FILE, SNAPSHOT_FILES } from './snapshot.js';

/** The four files (and snapshot.json when there is one) in memory, by file name (`modules.json`…), and what to call them in messages. */
export interface SnapshotFiles {
  /** e.g. `incoming/2026-06-01-a1b2c3.tar.gz`. */
  name: string;
  files: ReadonlyMap<string, Buffer>;
}

/** A snapshot directory's path, or the files of an upload. */
export type SnapshotSource = string | SnapshotFiles;

/** The bytes of one file of the source, or the reason it cannot be had. */
export type FileRead = { ok: true; bytes: Buffer } | { ok: false; reason: string };

/**
 * Why `directory` cannot be a snapshot source (it does not exist, or is a file), or undefined when it is a
 * directory. One reason for the whole source, rather than four "file is missing" problems.
 * @example await sourceDirectoryProblem('no-such-dir') // → 'no such directory'
 */
export async function sourceDirectoryProblem(directory: string): Promise<string | undefined> {
  try {
    const info = await stat(directory);
    return info.isDirectory()
      ? undefined
      : 'is not a directory: name the folder that holds standards.json, tags.json, manufacturers.json and modules.json';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'no such directory';
    if (code === 'ENOTDIR') return 'no such directory (a part of its path is a file)';
    return `cannot be read: ${code}`;
  }
}

/** Read one file of the source. */
export async function readSourceFile(source: SnapshotSource, file: string): Promise<FileRead> {
  if (typeof source !== 'string') {
    const bytes = source.files.get(file);
    return bytes ? { ok: true, bytes } : { ok: false, reason: `file is missing from ${source.name}` };
  }
  try {
    return { ok: true, bytes: await readFile(join(source, file)) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? 'file is missing' : `cannot be read: ${code}` };
  }
}

/**
 * The snapshot digest: SHA-256 (hex) of the four files' names and bytes, in name order (a missing file counts
 * as absent, so adding it is a change), then snapshot.json's when there is one (a snapshot without it has the
 * digest it always had). Equal for a directory and for an archive of the same files; each published version
 * records the digest of the snapshot it was built from (`npm run catalogue -- validate` prints it). About
 * 50 ms for the 13 MB of a 25,000-module snapshot.
 * @example snapshotDigest((name) => files.get(name)) // → 'b1946ac9…' (64 hex digits)
 */
export function snapshotDigest(bytesOf: (file: string) => Buffer | undefined): string {
  const hash = createHash('sha256');
  for (const name of Object.values(SNAPSHOT_FILES).sort()) {
    const bytes = bytesOf(name);
    hash.update(`${name}\0${bytes ? bytes.byteLength : -1}\0`);
    if (bytes) hash.update(bytes);
  }
  const meta = bytesOf(META_FILE);
  if (meta) hash.update(`${META_FILE}\0${meta.byteLength}\0`).update(meta);
  return hash.digest('hex');
}

/**
 * The digest of a snapshot source ({@link snapshotDigest}), reading its files.
 * @example await sourceDigest('fixtures/catalogue') // → 'b1946ac9…'
 */
export async function sourceDigest(source: SnapshotSource): Promise<string> {
  const files = new Map<string, Buffer>();
  for (const name of [...Object.values(SNAPSHOT_FILES), META_FILE]) {
    const read = await readSourceFile(source, name);
    if (read.ok) files.set(name, read.bytes);
  }
  return snapshotDigest((name) => files.get(name));
}

/** Where JSON.parse failed in `text`: from its message when it says, else from jsonc-parser's first error. */
function jsonErrorPosition(text: string, error: Error): number | undefined {
  const at = /at position (\d+)/.exec(error.message);
  if (at) return Number(at[1]);
  const errors: ParseError[] = [];
  parseJsonc(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  return errors[0]?.offset;
}

/** V8's words for what is wrong, without its position and its quote of the text. */
function v8Words(message: string): string {
  return message
    .replace(/\s*\(line \d+ column \d+\)$/, '')
    .replace(/ in JSON at position \d+$/, '')
    .replace(/, (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON$/, '')
    .replace(/^Unexpected end of JSON input$/, 'Unexpected end of the file');
}

/** The reason for a JSON syntax fault at byte `position` of the file. */
function syntaxReason(locator: Locator, position: number, words: string, afterComma: boolean): string {
  const { line, column } = locator.lineAndColumn(position);
  return `is not valid JSON: line ${line}, column ${column}: ${words}${afterComma ? ' (JSON allows no comma before it)' : ''}`;
}

/**
 * A JSON syntax error that JSON.parse found in `text`, the bytes of the file from `start` on (one record, or
 * the whole file), said with its line and column in the file (1-based). V8's message says what is wrong but
 * not always where (a trailing comma: "Unexpected token ']'"), so the place comes from jsonc-parser (VS
 * Code's JSON scanner), run only once JSON.parse has failed, on that text alone.
 * @example jsonSyntaxReason(Buffer.from('[{"a":1,}]'), 1, '{"a":1,}', error) // → "is not valid JSON: line 1, column 9: Expected double-quoted property name (JSON allows no comma before it)"
 */
export function jsonSyntaxReason(
  bytes: Buffer,
  start: number,
  text: string,
  error: Error,
  locator = new Locator(bytes),
): string {
  const position = jsonErrorPosition(text, error);
  if (position === undefined) return `is not valid JSON: ${v8Words(error.message)}`;
  const before = text.slice(0, position);
  const trailingComma = /,\s*$/.test(before) && /^\s*[\]}]/.test(text.slice(position));
  return syntaxReason(locator, start + Buffer.byteLength(before), v8Words(error.message), trailingComma);
}

/**
 * A fault between the records of a file's array (builder/snapshot/elements.ts), said as {@link jsonSyntaxReason} says one.
 * @example faultReason(Buffer.from('[1,]'), { position: 3, message: "Unexpected token ']'", afterComma: true }) // → "is not valid JSON: line 1, column 4: Unexpected token ']' (JSON allows no comma before it)"
 */
export function faultReason(bytes: Buffer, fault: SyntaxFault, locator = new Locator(bytes)): string {
  // Bytes that are not UTF-8 between records: said as what they are, not as an unexpected token.
  const notUtf8 = notUtf8At(bytes, fault.position);
  if (notUtf8 !== undefined) {
    const { line, column } = locator.lineAndColumn(fault.position);
    return `is not valid JSON: line ${line}, column ${column}: ${notUtf8}`;
  }
  return syntaxReason(locator, fault.position, v8Words(fault.message), fault.afterComma === true);
}
