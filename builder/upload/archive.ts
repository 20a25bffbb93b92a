/**
 * The upload format: a snapshot's four JSON files in one gzip-compressed tar archive, as `tar czf` makes it —
 * the files at the archive's root (`tar czf snapshot.tar.gz -C my-catalogue .`) or in one folder
 * (`tar czf snapshot.tar.gz my-catalogue`). It is read in memory, never onto a disk, and refused whole, with
 * every reason, when it breaks a rule:
 * - at most {@link UPLOAD_LIMITS}: compressed bytes, bytes once decompressed (a "zip bomb" stops there), entries;
 * - only regular files named standards.json, tags.json, manufacturers.json and modules.json, each once, and
 *   the folders that hold them: no other file, no link, device or special entry;
 * - no absolute name, no `..`, all four in the same folder.
 * Reading the archive is node-tar's (npm's own tar, `Parser`: headers, PAX and GNU long names, checksums);
 * deciding what is allowed is here.
 */
import { gunzipSync } from 'node:zlib';
import { Parser } from 'tar';
import type { Problem } from '../snapshot/problems.js';
import { SNAPSHOT_FILES } from '../snapshot/snapshot.js';

/** The bounds of an upload: about 10× a 100,000-module snapshot (52 MB of JSON, 5.3 MB compressed). */
export const UPLOAD_LIMITS = {
  /** The uploaded object. */
  compressedBytes: 128 * 2 ** 20,
  /** All entries once decompressed (the tar stream). */
  expandedBytes: 512 * 2 ** 20,
  /** Entries, folders included. */
  entries: 64,
} as const;

export interface UploadLimits {
  compressedBytes: number;
  expandedBytes: number;
  entries: number;
}

/** The name an upload must have under the incoming prefix: letters, digits, `.`, `_`, `-`, then `.tar.gz`. */
export const UPLOAD_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.tar\.gz$/;

const FILE_NAMES: ReadonlySet<string> = new Set(Object.values(SNAPSHOT_FILES));

export type ArchiveOutcome = { ok: true; files: Map<string, Buffer> } | { ok: false; problems: Problem[] };

interface Entry {
  path: string;
  type: string;
  size: number;
  body: Buffer;
}

/** The entries of a tar stream, or why it is not one (node-tar's Parser, strict: a bad checksum is an error). */
function tarEntries(tar: Buffer): { entries: Entry[]; error?: string } {
  const entries: Entry[] = [];
  let error: string | undefined;
  const parser = new Parser({
    strict: true,
    onReadEntry(entry) {
      const chunks: Buffer[] = [];
      entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      entry.on('end', () =>
        entries.push({ path: entry.path, type: entry.type, size: entry.size, body: Buffer.concat(chunks) }),
      );
    },
  });
  parser.on('error', (failure: Error) => {
    error ??= failure.message.replace(/^TAR_[A-Z_]+: /, '');
  });
  // Writing a whole buffer parses it synchronously.
  parser.end(tar);
  return error === undefined ? { entries } : { entries, error };
}

/** The folder and file name of an entry's path, without `./` segments and a trailing `/`. */
function partsOf(path: string): string[] {
  return path.split('/').filter((part) => part !== '' && part !== '.');
}

/**
 * Read an uploaded snapshot archive into its four files, or every reason it is refused.
 * @example
 * const read = readSnapshotArchive(await readFile('snapshot.tar.gz'), 'incoming/snapshot.tar.gz');
 * if (read.ok) await loadSnapshot({ name: 'incoming/snapshot.tar.gz', files: read.files });
 */
export function readSnapshotArchive(
  bytes: Buffer,
  name: string,
  limits: UploadLimits = UPLOAD_LIMITS,
): ArchiveOutcome {
  const refuse = (reason: string): ArchiveOutcome => ({ ok: false, problems: [{ file: name, reason }] });
  const tar = decompressed(bytes, limits);
  if (typeof tar === 'string') return refuse(tar);
  const { entries, error } = tarEntries(tar);
  if (error !== undefined && entries.length === 0) {
    return refuse(`is not a tar archive (${error}): upload a .tar.gz as \`tar czf\` makes it`);
  }
  const problems: Problem[] = [];
  if (error !== undefined) problems.push({ file: name, reason: `is damaged or incomplete: ${error}` });
  if (entries.length > limits.entries) {
    problems.push({
      file: name,
      reason: `holds ${entries.length} entries; an upload holds the four snapshot files (at most ${limits.entries} entries)`,
    });
    return { ok: false, problems };
  }
  const files = snapshotFiles(entries, name, problems);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, files };
}

/** The tar inside a gzip upload, or why it cannot be had (too large, not gzip, damaged). */
function decompressed(bytes: Buffer, limits: UploadLimits): Buffer | string {
  if (bytes.byteLength > limits.compressedBytes) {
    return `is ${bytes.byteLength} bytes; an upload may have at most ${limits.compressedBytes}`;
  }
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) {
    return 'is not gzip-compressed: upload a .tar.gz as `tar czf snapshot.tar.gz -C my-catalogue .` makes it';
  }
  try {
    return gunzipSync(bytes, { maxOutputLength: limits.expandedBytes });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ERR_BUFFER_TOO_LARGE'
      ? `expands to more than ${limits.expandedBytes} bytes; an upload may hold at most that much`
      : `cannot be decompressed (${(error as Error).message}): the upload is damaged or incomplete`;
  }
}

/** entryProblem's answer for a folder the files may sit in: skipped, not a problem. */
const A_FOLDER = 'a folder';

/**
 * The snapshot files among `entries`, by name; every entry that is not one (or is one twice, or elsewhere than
 * the others) added to `problems`.
 */
function snapshotFiles(entries: readonly Entry[], name: string, problems: Problem[]): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const folders = new Set<string>();
  for (const entry of entries) {
    const parts = partsOf(entry.path);
    const file = parts[parts.length - 1] ?? '';
    const reason =
      entryProblem(entry, parts) ?? (files.has(file) ? `${file} appears more than once` : undefined);
    if (reason === A_FOLDER) continue;
    if (reason !== undefined) {
      problems.push({ file: `${name}: ${entry.path}`, reason });
      continue;
    }
    folders.add(parts.length === 2 ? parts[0]! : '');
    files.set(file, entry.body);
  }
  if (folders.size > 1) {
    problems.push({
      file: name,
      reason: `the snapshot files are in different folders (${[...folders].map((f) => f || 'the root').join(', ')}): put all four in one`,
    });
  }
  return files;
}

/**
 * Why an entry is not a snapshot file, or undefined when it is one; A_FOLDER for a folder the files may sit
 * in (not a problem).
 */
function entryProblem(entry: Entry, parts: readonly string[]): string | undefined {
  if (entry.path.startsWith('/') || /^[A-Za-z]:/.test(entry.path)) {
    return 'an absolute name: entries are named relative to the archive';
  }
  if (parts.includes('..')) return 'a name with "..": entries stay inside the archive';
  if (entry.type === 'Directory') {
    return parts.length > 1 ? 'a nested folder: the four files sit at the root or in one folder' : A_FOLDER;
  }
  const file = parts[parts.length - 1] ?? '';
  if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'ContiguousFile') {
    return `a ${entry.type} entry: an upload holds regular files only (no links, devices or special files)`;
  }
  if (!FILE_NAMES.has(file)) {
    const appleDouble = file.startsWith('._')
      ? ' (macOS tar adds ._ files: run it with COPYFILE_DISABLE=1)'
      : '';
    return `an unexpected file: an upload holds ${[...FILE_NAMES].join(', ')} and nothing else${appleDouble}`;
  }
  if (parts.length > 2) return 'in a nested folder: the four files sit at the root or in one folder';
  return undefined;
}
