/**
 * What `npm run catalogue -- upload` sends: a snapshot folder packed into the upload format (the snapshot's files
 * at the archive's root, gzip-compressed tar: builder/upload/archive.ts reads it), or a `.tar.gz` made beforehand,
 * as it is. Then the same checks the builder makes before it publishes — the archive's rules, then the snapshot's
 * validation — so a snapshot the builder would refuse is refused here, with every problem, and never uploaded.
 */
import { readFile, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { create as createTar } from 'tar';
import { loadSnapshot } from './snapshot/load.js';
import type { Problem } from './snapshot/problems.js';
import { META_FILE, SNAPSHOT_FILES } from './snapshot/snapshot.js';
import { sourceDirectoryProblem } from './snapshot/source.js';
import { readSnapshotArchive, UPLOAD_LIMITS } from './upload/archive.js';

/** Packed entries carry this time, not the files': the same four files always pack to the same bytes. */
const PACKED_AT = new Date('2000-01-01T00:00:00Z');

/** Every file the snapshot format defines (docs/snapshot.md): the four data files and `snapshot.json`. */
export const PACKED_FILES: readonly string[] = [...Object.values(SNAPSHOT_FILES), META_FILE].sort();

/**
 * Every file of the snapshot format in `directory` — the four data files and `snapshot.json` — that exists (a
 * missing one is the check's to report) in one `.tar.gz` at its root, nothing else of the folder: what
 * `validate` reads is what is sent. Deterministic: the same files, the same bytes.
 * @example await packSnapshot('my-catalogue') // → <Buffer 1f 8b 08 …>
 */
export async function packSnapshot(directory: string): Promise<Buffer> {
  const present: string[] = [];
  for (const file of PACKED_FILES) {
    if (await stat(`${directory}/${file}`).catch(() => undefined)) present.push(file);
  }
  // `follow`: a linked file is packed as the file it names (an upload holds regular files only).
  const stream = createTar(
    { gzip: true, cwd: directory, portable: true, follow: true, mtime: PACKED_AT, noDirRecurse: true },
    present,
  );
  return buffer(stream as unknown as Readable);
}

/** What the check found: the archive to upload, or every problem (nothing to upload). */
export type CheckedUpload =
  | {
      ok: true;
      archive: Buffer;
      /** The snapshot digest of the four files (what `validate` prints and the version records). */
      digest: string;
      counts: { modules: number; manufacturers: number; standards: number; tags: number };
    }
  | { ok: false; problems: Problem[] };

/** Why `path` cannot be uploaded as it is (it is neither a snapshot folder nor a `.tar.gz`), or undefined. */
export async function sourceProblem(path: string): Promise<string | undefined> {
  if (path.endsWith('.tar.gz')) {
    const info = await stat(path).catch(() => undefined);
    return info?.isFile() ? undefined : 'no such file';
  }
  const problem = await sourceDirectoryProblem(path);
  return problem === undefined
    ? undefined
    : `${problem}; upload takes a snapshot folder or a .tar.gz made from one`;
}

/**
 * Pack `source` (a folder) or read it (a `.tar.gz`), then check it as the builder will: the archive's rules,
 * then the snapshot. Problems are named as the builder's report would name them, under `name`.
 * @example await checkUpload('my-catalogue', 'my-catalogue') // → { ok: true, archive, digest, counts }
 */
export async function checkUpload(source: string, name: string): Promise<CheckedUpload> {
  let archive: Buffer;
  if (source.endsWith('.tar.gz')) {
    const { size } = await stat(source);
    // Not read into memory when the builder would refuse it unread.
    if (size > UPLOAD_LIMITS.compressedBytes) {
      const reason = `is ${size} bytes; an upload may have at most ${UPLOAD_LIMITS.compressedBytes}`;
      return { ok: false, problems: [{ file: name, reason }] };
    }
    archive = await readFile(source);
  } else {
    archive = await packSnapshot(source);
  }
  const read = await readSnapshotArchive(archive, name);
  if (!read.ok) return read;
  // With the upload's limits, as the builder loads it: what passes here passes there.
  const loaded = await loadSnapshot({ name, files: read.files }, { limits: UPLOAD_LIMITS.snapshot });
  if (!loaded.ok) return loaded;
  const { modules, manufacturers, standards, tags } = loaded.snapshot;
  return {
    ok: true,
    archive,
    digest: loaded.digest,
    counts: {
      modules: modules.length,
      manufacturers: manufacturers.length,
      standards: standards.length,
      tags: tags.length,
    },
  };
}
