/**
 * The upload format: a snapshot's four JSON files (and its optional snapshot.json) in one gzip-compressed tar
 * archive, as `tar czf` makes it — the files at the archive's root (`tar czf snapshot.tar.gz -C my-catalogue .`)
 * or in one folder (`tar czf snapshot.tar.gz my-catalogue`). It is read in memory, never onto a disk, as a
 * stream (the decompressed tar is never held whole: only the snapshot files' bytes are kept), and refused whole,
 * with every reason, when it breaks a rule:
 * - at most {@link UPLOAD_LIMITS}: compressed bytes, bytes once decompressed (a "zip bomb" stops there), entries;
 * - compressed once: a tar inside, not another compressed file (its expansion would escape the bound);
 * - only regular files named standards.json, tags.json, manufacturers.json, modules.json and snapshot.json,
 *   each once, and the folders that hold them: no other file, no link, device or special entry;
 * - no absolute name, no `..`, all the files in the same folder.
 * Reading the archive is node-tar's (npm's own tar, `Parser`: headers, PAX and GNU long names, checksums);
 * deciding what is allowed is here.
 */
import { crc32, createGunzip, createInflateRaw } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { errorMessage } from '../../store/errors.js';
import { SNAPSHOT_LIMITS, type SnapshotLimits } from '../snapshot/load.js';
import { clipName, type Problem } from '../snapshot/problems.js';
import { META_FILE, SNAPSHOT_FILES } from '../snapshot/snapshot.js';

/**
 * The bounds of an upload: in bytes about 10× a 100,000-module snapshot (52 MB of JSON, 5.3 MB compressed);
 * in records, what the builder function publishes within its 15 minutes (a first publish of 100,000 modules
 * takes 7–9; docs/publishing.md). A larger catalogue is published with the CLI.
 */
export const UPLOAD_LIMITS: UploadLimits = {
  compressedBytes: 128 * 2 ** 20,
  expandedBytes: 512 * 2 ** 20,
  entries: 64,
  snapshot: {
    recordBytes: SNAPSHOT_LIMITS.recordBytes,
    records: { standards: 1_000, tags: 10_000, manufacturers: 10_000, modules: 100_000 },
  },
};

export interface UploadLimits {
  /** The uploaded object. */
  compressedBytes: number;
  /** All entries once decompressed (the tar stream). */
  expandedBytes: number;
  /** Entries, folders included. */
  entries: number;
  /** The snapshot inside: a record's bytes, records per file (builder/snapshot/load.ts). */
  snapshot: SnapshotLimits;
}

/** The name an upload must have under the incoming prefix: letters, digits, `.`, `_`, `-`, then `.tar.gz`. */
export const UPLOAD_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.tar\.gz$/;

const FILE_NAMES: ReadonlySet<string> = new Set([...Object.values(SNAPSHOT_FILES), META_FILE]);

export type ArchiveOutcome = { ok: true; files: Map<string, Buffer> } | { ok: false; problems: Problem[] };

interface Entry {
  path: string;
  type: string;
  /** The entry's bytes: kept only for a file the snapshot may hold. */
  body?: Buffer;
}

/** The entries of a tar stream as they arrive, or why it is not one (node-tar's Parser, strict: a bad checksum is an error). */
class TarReader {
  readonly entries: Entry[] = [];
  /** Every entry seen; only the first `limits.entries + 1` are kept. */
  count = 0;
  error: string | undefined;
  readonly #parser: Parser;

  constructor(readonly limits: UploadLimits) {
    this.#parser = new Parser({
      strict: true,
      // Compressed once: a compressed stream inside the tar is refused before it reaches the parser.
      zstd: false,
      onReadEntry: (entry) => this.#entry(entry),
    });
    this.#parser.on('error', (failure: Error) => {
      this.error ??= failure.message.replace(/^TAR_[A-Z_]+: /, '');
    });
  }

  #entry(entry: ReadEntry): void {
    if (++this.count > this.limits.entries + 1) {
      entry.resume();
      return;
    }
    const kept: Entry = { path: entry.path, type: entry.type };
    this.entries.push(kept);
    const parts = partsOf(entry.path);
    if (entryProblem(kept, parts) !== undefined) {
      entry.resume(); // refused or a folder: its bytes are not needed
      return;
    }
    // Into one buffer of the size the header declares (no copy of all the chunks at the end: a 512 MiB file
    // would take twice that for a moment); never more than an upload may expand to.
    const body = Buffer.allocUnsafe(Math.min(entry.size, this.limits.expandedBytes));
    let filled = 0;
    entry.on('data', (chunk: Buffer) => {
      filled += chunk.copy(body, filled);
    });
    entry.on('end', () => {
      kept.body = body.subarray(0, filled);
    });
  }

  write(chunk: Buffer): void {
    this.#parser.write(chunk);
  }

  end(): void {
    this.#parser.end();
  }
}

/** The folder and file name of an entry's path, without `./` segments and a trailing `/`. */
function partsOf(path: string): string[] {
  return path.split('/').filter((part) => part !== '' && part !== '.');
}

/** A tar stream starting with these is a compressed file inside the upload, not a tar. */
const COMPRESSED_MAGIC = [Buffer.from([0x1f, 0x8b]), Buffer.from([0x28, 0xb5, 0x2f, 0xfd])];

/**
 * Read an uploaded snapshot archive into its files, or every reason it is refused. Memory: the compressed
 * bytes, the snapshot files' bytes, and one decompressed chunk at a time.
 * @example
 * const read = await readSnapshotArchive(await readFile('snapshot.tar.gz'), 'incoming/snapshot.tar.gz');
 * if (read.ok) await loadSnapshot({ name: 'incoming/snapshot.tar.gz', files: read.files });
 */
export async function readSnapshotArchive(
  bytes: Buffer,
  name: string,
  limits: UploadLimits = UPLOAD_LIMITS,
): Promise<ArchiveOutcome> {
  const refuse = (reason: string): ArchiveOutcome => ({ ok: false, problems: [{ file: name, reason }] });
  const tar = new TarReader(limits);
  const failure = await decompress(bytes, limits, (chunk) => tar.write(chunk));
  if (failure !== undefined) return refuse(failure);
  tar.end();
  const { entries, error } = tar;
  if (error !== undefined && entries.length === 0) {
    return refuse(`is not a tar archive (${error}): upload a .tar.gz as \`tar czf\` makes it`);
  }
  const problems: Problem[] = [];
  if (error !== undefined) problems.push({ file: name, reason: `is damaged or incomplete: ${error}` });
  if (tar.count > limits.entries) {
    problems.push({
      file: name,
      reason: `holds ${tar.count} entries; an upload holds the four snapshot files (at most ${limits.entries} entries)`,
    });
    return { ok: false, problems };
  }
  const files = snapshotFiles(entries, name, problems);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, files };
}

/**
 * Decompress a gzip upload chunk by chunk into `onChunk`, stopping as soon as it expands past the limit;
 * undefined, or why it cannot be had (too large, not gzip, compressed twice, damaged).
 */
function decompress(
  bytes: Buffer,
  limits: UploadLimits,
  onChunk: (chunk: Buffer) => void,
): Promise<string | undefined> {
  if (bytes.byteLength > limits.compressedBytes) {
    return Promise.resolve(
      `is ${bytes.byteLength} bytes; an upload may have at most ${limits.compressedBytes}`,
    );
  }
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) {
    return Promise.resolve(
      'is not gzip-compressed: upload a .tar.gz as `tar czf snapshot.tar.gz -C my-catalogue .` makes it',
    );
  }
  return new Promise((resolve) => {
    const gunzip = createGunzip();
    let expanded = 0;
    const stop = (reason: string) => {
      gunzip.destroy();
      resolve(reason);
    };
    gunzip.on('data', (chunk: Buffer) => {
      if (expanded === 0 && COMPRESSED_MAGIC.some((magic) => chunk.subarray(0, magic.length).equals(magic))) {
        return stop('holds a compressed file, not a tar archive: compress once, as `tar czf` does');
      }
      expanded += chunk.byteLength;
      if (expanded > limits.expandedBytes) {
        return stop(
          `expands to more than ${limits.expandedBytes} bytes; an upload may hold at most that much`,
        );
      }
      onChunk(chunk);
    });
    gunzip.on('error', (error) => resolve(decompressionFault(bytes, error, limits)));
    gunzip.on('end', () => resolve(undefined));
    gunzip.end(bytes);
  });
}

/**
 * Why decompression failed: bytes appended to whole gzip data (said as such, with how many), or damage. Looked
 * at again only now, in a second pass over the first member's deflate data alone (bounded as the first).
 */
async function decompressionFault(bytes: Buffer, error: Error, limits: UploadLimits): Promise<string> {
  const trailing = await bytesAfterGzip(bytes, limits);
  if (trailing > 0) {
    return (
      `ends with ${trailing} bytes after its gzip data that are not gzip (${errorMessage(error)}): the ` +
      'archive before them is whole, but something was appended to it (a download or a copy that added ' +
      'bytes, or files joined together); upload the .tar.gz exactly as tar czf wrote it'
    );
  }
  return `cannot be decompressed (${errorMessage(error)}): the upload is damaged or incomplete`;
}

/** Where a gzip member's deflate data starts: after its header and the optional fields its flags announce. */
function gzipHeaderEnd(bytes: Buffer): number | undefined {
  const flags = bytes[3] ?? 0;
  let at = 10;
  if (flags & 0x04) at += 2 + (bytes[at] ?? 0) + 256 * (bytes[at + 1] ?? 0); // FEXTRA
  for (const flag of [0x08, 0x10]) {
    // FNAME, FCOMMENT: zero-terminated
    if (flags & flag) {
      const zero = bytes.indexOf(0, at);
      if (zero < 0) return undefined;
      at = zero + 1;
    }
  }
  if (flags & 0x02) at += 2; // FHCRC
  return at < bytes.length ? at : undefined;
}

/**
 * How many bytes follow the upload's first gzip member, when that member is whole (its deflate data ends, and
 * its trailer's CRC-32 and size are what it decompressed to); 0 when it is not (the upload is damaged, not
 * lengthened).
 */
function bytesAfterGzip(bytes: Buffer, limits: UploadLimits): Promise<number> {
  const start = gzipHeaderEnd(bytes);
  if (start === undefined) return Promise.resolve(0);
  return new Promise((resolve) => {
    const inflate = createInflateRaw();
    let expanded = 0;
    let crc = 0;
    inflate.on('data', (chunk: Buffer) => {
      expanded += chunk.byteLength;
      crc = crc32(chunk, crc);
      if (expanded > limits.expandedBytes) {
        inflate.destroy();
        resolve(0);
      }
    });
    inflate.on('error', () => resolve(0));
    inflate.on('end', () => {
      // The deflate data ends where the inflater stopped reading; the 8-byte trailer (CRC-32, size) follows,
      // and both must be what was inflated: a byte changed inside the data may still inflate to its size.
      const end = start + inflate.bytesWritten + 8;
      const whole =
        end <= bytes.length &&
        bytes.readUInt32LE(end - 8) === crc &&
        bytes.readUInt32LE(end - 4) === expanded % 2 ** 32;
      resolve(whole ? bytes.length - end : 0);
    });
    inflate.end(bytes.subarray(start));
  });
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
      problems.push({ file: `${name}: ${clipName(entry.path)}`, reason });
      continue;
    }
    folders.add(parts.length === 2 ? parts[0]! : '');
    files.set(file, entry.body ?? Buffer.alloc(0));
  }
  if (folders.size > 1) {
    problems.push({
      file: name,
      reason: `the snapshot files are in different folders (${[...folders].map((f) => clipName(f) || 'the root').join(', ')}): put all four in one`,
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
    return `an unexpected file: an upload holds ${Object.values(SNAPSHOT_FILES).join(', ')} (and ${META_FILE} when the snapshot has one) and nothing else${appleDouble}`;
  }
  if (parts.length > 2) return 'in a nested folder: the four files sit at the root or in one folder';
  return undefined;
}
