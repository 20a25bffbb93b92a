/**
 * Reading a snapshot (a directory, or an upload's files): each file's records read, parsed and checked one at
 * a time (elements.ts, validate.ts), in an order where every reference points at a file read before; the
 * snapshot as a whole checked last (not empty unless it says so). Work and memory are bounded by the files'
 * bytes whatever they hold: no file is parsed whole, a record is parsed only within {@link SnapshotLimits}, the
 * records are kept only while no problem has been found, and problems are counted in full but kept up to a cap
 * (problems.ts).
 */
import { digest128 } from '../../store/layout.js';
import { firstValue, MAX_DEPTH, scanArray, scanValue, type ValueScan } from './elements.js';
import { type ExactProblem, encodingReason, exactProblems, isUtf8Range, Locator } from './exact.js';
import { describeValue, type Problem, ProblemList } from './problems.js';
import { META_FILE, SNAPSHOT_FILES, type Snapshot, type SnapshotMeta } from './snapshot.js';
import {
  faultReason,
  jsonSyntaxReason,
  readSourceFile,
  type SnapshotSource,
  snapshotDigest,
  sourceDirectoryProblem,
} from './source.js';
import { FileValidator, KINDS, type Kind } from './validate.js';

export type LoadOutcome =
  | {
      ok: true;
      snapshot: Snapshot;
      /** The snapshot digest of the files (source.ts snapshotDigest): what a version records it came from. */
      digest: string;
      /** With the `builder` option: each module's source digest, for the publish (builder/publish/reuse.ts). */
      sourceDigests?: string[];
      /** With the `builder` option: modules whose own fields were not checked again, validated before. */
      unchanged?: number;
    }
  /**
   * Refused: `problems` holds the first PROBLEM_CAP (1,000) problems in file and record order, `problemCount`
   * counts every one (`problems.length < problemCount` when some were not kept).
   */
  | { ok: false; problems: Problem[]; problemCount: number };

/** How much a snapshot may hold, checked as it is read (nothing beyond a limit is parsed). */
export interface SnapshotLimits {
  /** Bytes of JSON one record may take (a larger one is refused without being parsed). */
  recordBytes: number;
  /** Records each file may hold (the rest are counted, not parsed). */
  records: Record<Kind, number>;
}

/**
 * The limits of every snapshot: a record of at most 1 MiB of JSON (a module of the fixture takes about
 * 500 bytes); no limit on the records (the CLI publishes from the publisher's own machine). Uploads have
 * tighter ones (builder/upload/archive.ts UPLOAD_LIMITS).
 */
export const SNAPSHOT_LIMITS: SnapshotLimits = {
  recordBytes: 2 ** 20,
  records: {
    standards: Number.POSITIVE_INFINITY,
    tags: Number.POSITIVE_INFINITY,
    manufacturers: Number.POSITIVE_INFINITY,
    modules: Number.POSITIVE_INFINITY,
  },
};

export interface LoadOptions {
  /** The builder's fingerprint (builder/publish/reuse.ts): compute each module's source digest. */
  builder?: string;
  /**
   * What the target's current version knows of its modules: a module it holds unchanged, written by the same
   * builder, was validated by this same code and is checked only against the other records.
   */
  current?: KnownSources;
  /** Default {@link SNAPSHOT_LIMITS}. */
  limits?: SnapshotLimits;
}

/** The source digests of the modules of a published version, and the builder that wrote it. */
export interface KnownSources {
  /** The builder's fingerprint; undefined when the version was written without one (nothing is trusted). */
  builder: string | undefined;
  /** The source digest of module `id` in that version (null or undefined: unknown). */
  sourceOf(id: number): string | null | undefined;
}

/** One load: what it was asked, and what it found so far. */
interface Loading {
  options: LoadOptions;
  limits: SnapshotLimits;
  problems: ProblemList;
  /** The ids of the files checked so far, for the references of the next ones. */
  known: Partial<Record<Kind, { ids: ReadonlySet<number> | undefined }>>;
  /** The records, kept while no problem has been found anywhere (then they would only be thrown away). */
  records: Partial<Record<Kind, unknown[]>>;
  /** Module source digests, with the `builder` option, while records are kept. */
  digests: string[] | undefined;
  /** A problem was found: records are no longer kept. */
  refused: boolean;
  unchanged: number;
}

const plural = (n: number, one: string) => `${n.toLocaleString('en-US')} ${one}${n === 1 ? '' : 's'}`;

/** How a value that is not an array starts, for a file too large to parse whole only to say so. */
function describeStart(bytes: Buffer, at: number): string {
  const kind: Record<string, string> = {
    '{': 'an object',
    '"': 'a string',
    t: 'true',
    f: 'false',
    n: 'null',
  };
  const first = String.fromCharCode(bytes[at] ?? 0);
  return `${kind[first] ?? 'a number'} of ${plural(bytes.length, 'byte')}`;
}

/** The snapshot is refused: no record read so far or from now on is needed. */
function dropRecords(loading: Loading): void {
  if (loading.refused) return;
  loading.refused = true;
  for (const records of Object.values(loading.records)) records.length = 0;
  loading.digests = undefined;
}

/** A file being read: its bytes, whether they are UTF-8 throughout, and how places in it are said. */
interface FileBytes {
  bytes: Buffer;
  /** The whole file is UTF-8 (one native check): no record needs its own. */
  utf8: boolean;
  locator: Locator;
}

function fileBytes(bytes: Buffer): FileBytes {
  return { bytes, utf8: isUtf8Range(bytes, 0, bytes.length), locator: new Locator(bytes) };
}

/** What reading one value (a record, or a file's whole value) came to. */
type ValueRead =
  | { ok: true; value: unknown }
  /** It cannot be read exactly: its problems went to `add` (how many). */
  | { ok: false; problems: number }
  /** It is not JSON: the file is unreadable from here (the reason says where). */
  | { ok: false; syntax: string };

/**
 * Read the value at `bytes[start, end)` exactly (exact.ts) or not at all: nesting past the bound, bytes that
 * are not UTF-8, a repeated name, an escaped lone surrogate, a number a double does not hold as written — each
 * problem given to `add` with its place — or not JSON (`syntax`).
 */
function readValue(
  file: FileBytes,
  start: number,
  scan: ValueScan,
  add: (problem: ExactProblem) => void,
): ValueRead {
  const { bytes, locator } = file;
  const { end } = scan;
  if (scan.tooDeepAt >= 0) {
    add({
      at: scan.tooDeepAt,
      reason: () =>
        `nests arrays and objects deeper than ${MAX_DEPTH} levels (counting the file's outermost value as one; a ` +
        'module needs four): it is refused unread; nest less deeply',
    });
    return { ok: false, problems: 1 };
  }
  if (!file.utf8 && !isUtf8Range(bytes, start, end)) {
    const problems = exactProblems(bytes, start, end, add);
    if (problems > 0) return { ok: false, problems };
  }
  const text = bytes.toString('utf8', start, end);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, syntax: jsonSyntaxReason(bytes, start, text, error as Error, locator) };
  }
  const problems = scan.suspect ? exactProblems(bytes, start, end, add) : 0;
  return problems > 0 ? { ok: false, problems } : { ok: true, value };
}

/**
 * Read and check one file's records into `validator`: how many the file holds, and `unreadable`, the reason
 * when it is not a JSON array at all (its record problems then do not count: nothing in it could be read).
 */
function readRecords(
  bytes: Buffer,
  validator: FileValidator,
  loading: Loading,
): { unreadable?: string; count: number } {
  const encoding = encodingReason(bytes);
  if (encoding) return { unreadable: encoding, count: 0 };
  const file = fileBytes(bytes);
  const open = firstValue(bytes);
  if (bytes[open] !== 0x5b) return { unreadable: notAnArray(file, open, validator, loading), count: 0 };
  const { kind } = validator;
  const limit = loading.limits.records[kind];
  loading.records[kind] = [];
  let count = 0;
  let unreadable: string | undefined;
  let index = 0;
  // A record's problems, with their place (one function for the file, not one per record).
  const refuse = (problem: ExactProblem) => {
    if (!validator.problems.keeping) return validator.problems.countMore(1);
    const place = file.locator.place;
    validator.refuseRecord(index, `${place(problem.at)}: ${problem.reason(place)}`, problem.field);
  };
  const fault = scanArray(bytes, open, (start, end, scan) => {
    index = count++;
    if (index >= limit) return undefined; // counted only
    if (end - start > loading.limits.recordBytes) {
      const most = plural(loading.limits.recordBytes, 'byte');
      validator.refuseRecord(
        index,
        `is ${plural(end - start, 'byte')} of JSON; a record may have at most ${most}`,
      );
      dropRecords(loading);
      return undefined;
    }
    const read = readValue(file, start, scan, refuse);
    if (!read.ok) {
      if ('syntax' in read) {
        unreadable = read.syntax;
        return false;
      }
      dropRecords(loading);
      return undefined;
    }
    // A module's source digest, for a publish that reuses unchanged ones (builder/publish/reuse.ts).
    const digest =
      kind === 'modules' && loading.digests && !loading.refused
        ? digest128(bytes.subarray(start, end))
        : undefined;
    checkRecord(loading, validator, read.value, index, digest);
    return undefined;
  });
  if (fault && unreadable === undefined) unreadable = faultReason(bytes, fault, file.locator);
  if (unreadable === undefined && count > limit) {
    validator.problems.addFirst({
      file: SNAPSHOT_FILES[kind],
      reason: `holds ${plural(count, 'record')}; an upload may hold at most ${plural(limit, 'record')} in ${SNAPSHOT_FILES[kind]}`,
    });
  }
  return unreadable === undefined ? { count } : { unreadable, count };
}

/**
 * A file whose value is not an array: the problem is the validator's, or the reason it is not JSON at all. It
 * is read (exactly, as a record is) only when it is no larger than a record may be, to say what it is.
 */
function notAnArray(
  file: FileBytes,
  open: number,
  validator: FileValidator,
  loading: Loading,
): string | undefined {
  const { bytes } = file;
  if (bytes.length - open > loading.limits.recordBytes) {
    validator.notArray(describeStart(bytes, open));
    return undefined;
  }
  const read = readWhole(file, open, (reason, field) => validator.refuseFile(reason, field));
  if (read.ok) validator.notArray(describeValue(read.value));
  return read.ok || !('syntax' in read) ? undefined : read.syntax;
}

/**
 * A file's whole value read exactly, from `open` (its first byte that is not whitespace) to its end: what
 * follows the value is JSON.parse's to judge. Problems go to `refuse` with their place.
 */
function readWhole(
  file: FileBytes,
  open: number,
  refuse: (reason: string, field?: string) => void,
): ValueRead {
  const scan = scanValue(file.bytes, open, 0);
  if (scan.tooDeepAt < 0) scan.end = file.bytes.length;
  const place = file.locator.place;
  return readValue(file, 0, scan, (problem) =>
    refuse(`${place(problem.at)}: ${problem.reason(place)}`, problem.field),
  );
}

/**
 * Check one parsed record; keep it while the snapshot has no problem, with its source `digest` (a module, when
 * the publish reuses unchanged ones): a module the current version holds with the same digest, validated by
 * this same builder, is not checked again (builder/publish/reuse.ts).
 */
function checkRecord(
  loading: Loading,
  validator: FileValidator,
  record: unknown,
  index: number,
  digest: string | undefined,
): void {
  const { builder, current } = loading.options;
  const id = digest === undefined ? undefined : (record as { id?: unknown } | null)?.id;
  const unchanged =
    current !== undefined &&
    current.builder === builder &&
    typeof id === 'number' &&
    current.sourceOf(id) === digest;
  validator.record(record, index, unchanged);
  if (loading.problems.count + validator.problems.count > 0) {
    dropRecords(loading);
    return;
  }
  loading.records[validator.kind]!.push(record);
  if (digest !== undefined) loading.digests?.push(digest);
  if (unchanged) loading.unchanged++;
}

/** Read snapshot.json, if the source has one: what the snapshot says about itself, or the problem with it. */
async function readMeta(
  source: SnapshotSource,
  loading: Loading,
): Promise<{ meta: SnapshotMeta; bytes?: Buffer }> {
  const read = await readSourceFile(source, META_FILE);
  if (!read.ok) return { meta: {} };
  const refuse = (reason: string) => {
    loading.problems.add({ file: META_FILE, reason });
    return { meta: {}, bytes: read.bytes };
  };
  if (read.bytes.length > loading.limits.recordBytes) {
    return refuse(
      `is ${plural(read.bytes.length, 'byte')}; it may have at most ${plural(loading.limits.recordBytes, 'byte')}`,
    );
  }
  const encoding = encodingReason(read.bytes);
  if (encoding) return refuse(encoding);
  const file = fileBytes(read.bytes);
  const value = readWhole(file, firstValue(read.bytes), (reason, field) =>
    loading.problems.add({ file: META_FILE, ...(field !== undefined && { field }), reason }),
  );
  if (!value.ok) return 'syntax' in value ? refuse(value.syntax) : { meta: {}, bytes: read.bytes };
  const meta = value.value;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    return refuse(`must be a JSON object (got ${describeValue(meta)})`);
  }
  for (const [field, value] of Object.entries(meta)) {
    if (field !== 'empty_catalogue') {
      loading.problems.add({ file: META_FILE, field, reason: 'unknown field (allowed: empty_catalogue)' });
    } else if (typeof value !== 'boolean') {
      loading.problems.add({
        file: META_FILE,
        field,
        reason: `must be true or false (got ${describeValue(value)})`,
      });
    }
  }
  return { meta: meta as SnapshotMeta, bytes: read.bytes };
}

/** An empty catalogue only when the snapshot says it means one; the flag only on an empty one. */
function checkEmptiness(meta: SnapshotMeta, modules: number | undefined, problems: ProblemList): void {
  if (modules === undefined) return;
  const meant = meta.empty_catalogue === true;
  if (modules === 0 && !meant) {
    problems.add({
      file: SNAPSHOT_FILES.modules,
      reason:
        `holds no modules: publishing it would empty the catalogue; if that is what you mean, ` +
        `add ${META_FILE} with {"empty_catalogue": true}`,
    });
  } else if (modules > 0 && meant) {
    problems.add({
      file: META_FILE,
      field: 'empty_catalogue',
      reason: `says the catalogue is empty, but modules.json holds ${plural(modules, 'module')}: remove it`,
    });
  }
}

/**
 * Read and validate the snapshot in `source` (a directory, or an upload's files). A missing or unparseable
 * file is a problem like any other, reported together with the problems of the files that did load; a
 * directory that is not there (or is a file) is one problem, naming it.
 * @example
 * const loaded = await loadSnapshot('fixtures/catalogue');
 * if (!loaded.ok) for (const p of loaded.problems) console.error(formatProblem(p));
 * if (!loaded.ok && loaded.problemCount > loaded.problems.length) console.error(`… and ${loaded.problemCount - loaded.problems.length} more`);
 */
export async function loadSnapshot(source: SnapshotSource, options: LoadOptions = {}): Promise<LoadOutcome> {
  if (typeof source === 'string') {
    const reason = await sourceDirectoryProblem(source);
    if (reason) return { ok: false, problems: [{ file: source, reason }], problemCount: 1 };
  }
  const loading: Loading = {
    options,
    limits: options.limits ?? SNAPSHOT_LIMITS,
    problems: new ProblemList(),
    known: {},
    records: {},
    digests: options.builder === undefined ? undefined : [],
    refused: false,
    unchanged: 0,
  };
  const files = new Map<string, Buffer>();
  let moduleCount: number | undefined;
  for (const kind of KINDS) {
    const file = SNAPSHOT_FILES[kind];
    const read = await readSourceFile(source, file);
    if (!read.ok) {
      loading.problems.add({ file, reason: read.reason });
      dropRecords(loading);
      continue;
    }
    files.set(file, read.bytes);
    const validator = new FileValidator(kind, loading.known);
    const { unreadable, count } = readRecords(read.bytes, validator, loading);
    if (unreadable !== undefined) {
      loading.problems.add({ file, reason: unreadable });
      dropRecords(loading);
      continue;
    }
    loading.known[kind] = validator.finish();
    loading.problems.append(validator.problems);
    if (kind === 'modules') moduleCount = count;
  }
  const { meta, bytes: metaBytes } = await readMeta(source, loading);
  if (metaBytes) files.set(META_FILE, metaBytes);
  checkEmptiness(meta, moduleCount, loading.problems);
  const { problems, records } = loading;
  if (problems.count > 0) return { ok: false, problems: problems.kept, problemCount: problems.count };
  return {
    ok: true,
    snapshot: records as Snapshot,
    digest: snapshotDigest((file) => files.get(file)),
    ...(loading.digests && { sourceDigests: loading.digests, unchanged: loading.unchanged }),
  };
}
