/** Shared helpers of the builder tests: the fixture, temporary directories and directory fingerprints. */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SNAPSHOT_FILES, type Snapshot } from '../../builder/snapshot/snapshot.js';
import { POINTER_KEY } from '../../store/layout.js';
import { type IndexEntry, type Pointer, parsePointer, parseShard } from '../../store/pointer.js';

export const FIXTURE_DIR = fileURLToPath(new URL('../../fixtures/catalogue/', import.meta.url));
export const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));

/** A fresh deep copy of the fixture snapshot (files parsed as they are, unvalidated). */
export function fixtureSnapshot(): Snapshot {
  const read = (file: string) => JSON.parse(readFileSync(join(FIXTURE_DIR, file), 'utf8'));
  return {
    standards: read(SNAPSHOT_FILES.standards),
    tags: read(SNAPSHOT_FILES.tags),
    manufacturers: read(SNAPSHOT_FILES.manufacturers),
    modules: read(SNAPSHOT_FILES.modules),
  };
}

/** The fixture cut to its first `modules` modules (every reference still resolves): quick S3 round trips. */
export function smallSnapshot(modules = 30): Snapshot {
  const snapshot = fixtureSnapshot();
  snapshot.modules = snapshot.modules.slice(0, modules);
  return snapshot;
}

/** Temporary directories removed by {@link removeTemporaryDirectories} (call it in afterAll). */
const created: string[] = [];

export function temporaryDirectory(label: string): string {
  const directory = mkdtempSync(join(tmpdir(), `cat-${label}-`));
  created.push(directory);
  return directory;
}

/**
 * A temporary directory holding a byte-identical copy of `template` (a target published once and shared by
 * several tests, each changing its own copy).
 */
export function copiedDirectory(template: string, label: string): string {
  const directory = temporaryDirectory(label);
  cpSync(template, directory, { recursive: true });
  return directory;
}

export function removeTemporaryDirectories(): void {
  for (const directory of created.splice(0)) rmSync(directory, { recursive: true, force: true });
}

/** Write the files of a (possibly broken) snapshot; `raw` maps a file name to its text, `null` = absent. */
export function writeSnapshotFiles(
  snapshot: Partial<Record<keyof Snapshot, unknown>>,
  raw: Partial<Record<keyof Snapshot, string | null>> = {},
): string {
  const directory = temporaryDirectory('snapshot');
  for (const [kind, file] of Object.entries(SNAPSHOT_FILES) as [keyof Snapshot, string][]) {
    const text = kind in raw ? raw[kind] : JSON.stringify(snapshot[kind]);
    if (text !== null && text !== undefined) writeFileSync(join(directory, file), text);
  }
  return directory;
}

/** Every file under `root` with its size, mtime and content hash: equal fingerprints = untouched tree. */
export function fingerprint(root: string): Record<string, string> {
  const result: Record<string, string> = {};
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else {
        const info = statSync(path);
        const hash = createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 16);
        result[relative(root, path)] = `${info.size}:${info.mtimeMs}:${hash}`;
      }
    }
  };
  walk(root);
  return result;
}

/** The version a pointer names in a directory target: its entries and every object it references. */
export function versionOn(
  root: string,
  pointerBytes: Buffer = readFileSync(join(root, POINTER_KEY)),
): { pointer: Pointer; version: string; entries: Map<string, IndexEntry>; objectIds: Set<string> } {
  const pointer = parsePointer(pointerBytes);
  if (!pointer) throw new Error(`no pointer of this format in ${root}`);
  const entries = new Map<string, IndexEntry>();
  const objectIds = new Set(pointer.shards);
  for (const id of new Set(pointer.shards)) {
    const shard = parseShard(readFileSync(join(root, 'o', id)));
    if (!shard) throw new Error(`shard ${id} in ${root} is not readable`);
    for (const [key, entry] of Object.entries(shard)) {
      entries.set(key, entry);
      objectIds.add(typeof entry === 'string' ? entry : entry[0]);
    }
  }
  return { pointer, version: pointer.version, entries, objectIds };
}

/**
 * A snapshot as a publisher uploads it: its files (and `extra` ones, e.g. snapshot.json) archived by
 * `tar czf archive -C dir .` (GNU tar).
 */
export function snapshotArchive(
  snapshot: Partial<Record<keyof Snapshot, unknown>>,
  raw: Partial<Record<keyof Snapshot, string | null>> = {},
  extra: Record<string, string> = {},
): Buffer {
  const directory = writeSnapshotFiles(snapshot, raw);
  for (const [file, text] of Object.entries(extra)) writeFileSync(join(directory, file), text);
  return execFileSync('tar', ['czf', '-', '-C', directory, '.'], { maxBuffer: 2 ** 30 });
}

/**
 * A realistic bad export: `count` modules (the fixture's, repeated with fresh ids) with two wrong fields each
 * (`hp: 0`, `depth_mm: -5`): `2 × count` problems. 70,000 of them overflowed the stack once.
 */
export function badExport(count = 70_000): Snapshot {
  const snapshot = fixtureSnapshot();
  const fixture = snapshot.modules;
  snapshot.modules = Array.from({ length: count }, (_, i) => ({
    ...fixture[i % fixture.length]!,
    id: i + 1,
    hp: 0,
    depth_mm: -5,
  }));
  return snapshot;
}
