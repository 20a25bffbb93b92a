/**
 * Packing and checking an upload before it is sent (builder/upload-pack.ts): a folder packs into exactly what
 * the builder reads (every file the snapshot format defines, snapshot.json included, at the archive's root,
 * nothing else of the folder), the same files always into the same bytes; the check refuses what the builder
 * refuses, with the builder's words and the builder's limits; an archive too large is refused without being
 * read.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../builder/snapshot/load.js';
import { META_FILE, SNAPSHOT_FILES } from '../../builder/snapshot/snapshot.js';
import { readSnapshotArchive, UPLOAD_LIMITS } from '../../builder/upload/archive.js';
import { checkUpload, PACKED_FILES, packSnapshot, sourceProblem } from '../../builder/upload-pack.js';
import {
  fixtureSnapshot,
  removeTemporaryDirectories,
  temporaryDirectory,
  writeSnapshotFiles,
} from '../helpers/builder.js';

afterAll(removeTemporaryDirectories);

describe('packing a folder', () => {
  it('holds the four files at the root and nothing else; the builder reads them back as they are', async () => {
    const folder = writeSnapshotFiles(fixtureSnapshot());
    writeFileSync(join(folder, 'README.md'), 'notes');
    writeFileSync(join(folder, '._modules.json'), 'macOS metadata');

    const archive = await packSnapshot(folder);

    const listed = execFileSync('tar', ['tzf', '-'], { input: archive, encoding: 'utf8' }).trim().split('\n');
    expect(listed).toEqual(['manufacturers.json', 'modules.json', 'standards.json', 'tags.json']);
    const read = await readSnapshotArchive(archive, 'packed');
    expect(read.ok).toBe(true);
    if (read.ok) {
      expect(read.files.get('modules.json')!.toString()).toBe(JSON.stringify(fixtureSnapshot().modules));
    }
  });

  it('packs every file the snapshot format defines, snapshot.json included; the builder reads each back as it was', async () => {
    expect(PACKED_FILES).toEqual([...Object.values(SNAPSHOT_FILES), META_FILE].sort());
    const snapshot = { ...fixtureSnapshot(), modules: [] };
    const folder = writeSnapshotFiles(snapshot);
    writeFileSync(join(folder, META_FILE), '{"empty_catalogue": true}\n');

    const archive = await packSnapshot(folder);

    const listed = execFileSync('tar', ['tzf', '-'], { input: archive, encoding: 'utf8' }).trim().split('\n');
    expect(listed).toEqual(PACKED_FILES);
    const read = await readSnapshotArchive(archive, 'packed');
    if (!read.ok) throw new Error(read.problems[0]?.reason);
    for (const file of PACKED_FILES) {
      expect(read.files.get(file)?.equals(readFileSync(join(folder, file))), file).toBe(true);
    }
    // What validate accepts, the builder accepts: the empty catalogue it means, with the same digest.
    const fromFolder = await loadSnapshot(folder);
    const fromUpload = await loadSnapshot({ name: 'packed', files: read.files });
    expect(fromFolder).toMatchObject({ ok: true, snapshot: { modules: [] } });
    expect(fromUpload).toMatchObject({ ok: true, digest: fromFolder.ok && fromFolder.digest });
  });

  it('packs the same files into the same bytes, whatever their times; a linked file as the file', async () => {
    const a = writeSnapshotFiles(fixtureSnapshot());
    const b = writeSnapshotFiles(fixtureSnapshot());
    utimesSync(join(b, 'modules.json'), new Date('2031-01-01'), new Date('2031-01-01'));
    const c = temporaryDirectory('linked');
    for (const file of ['standards.json', 'tags.json', 'manufacturers.json', 'modules.json']) {
      symlinkSync(join(a, file), join(c, file));
    }

    const [packedA, packedB, packedC] = (await Promise.all([a, b, c].map(packSnapshot))) as [
      Buffer,
      Buffer,
      Buffer,
    ];
    expect(packedB.equals(packedA)).toBe(true);
    expect(packedC.equals(packedA)).toBe(true);
  });
});

describe('checking before the upload', () => {
  it('a valid folder: the archive, the snapshot digest and the counts', async () => {
    const checked = await checkUpload(writeSnapshotFiles(fixtureSnapshot()), 'my-catalogue');
    expect(checked).toMatchObject({
      ok: true,
      digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      counts: { modules: 204, manufacturers: 25, standards: 6, tags: 45 },
    });
  });

  it('a missing file and an invalid record: every problem, as the builder names them', async () => {
    const broken = fixtureSnapshot();
    broken.modules[0]!.hp = -1;
    const checked = await checkUpload(writeSnapshotFiles(broken, { tags: null }), 'my-catalogue');
    expect(checked.ok).toBe(false);
    if (!checked.ok) {
      expect(checked.problems).toEqual([
        { file: 'tags.json', reason: 'file is missing from my-catalogue' },
        expect.objectContaining({ file: 'modules.json', id: broken.modules[0]!.id, field: 'hp' }),
        ...checked.problems.slice(2),
      ]);
    }
  });

  it('a deliberately empty catalogue is checked and packed as validate takes it, not refused for a file it has', async () => {
    const folder = writeSnapshotFiles({ ...fixtureSnapshot(), modules: [] });
    writeFileSync(join(folder, META_FILE), '{"empty_catalogue": true}');
    expect(await checkUpload(folder, 'empty')).toMatchObject({ ok: true, counts: { modules: 0 } });
  });

  it("a snapshot.json that validate refuses is refused before the upload, with validate's words", async () => {
    const folder = writeSnapshotFiles(fixtureSnapshot());
    writeFileSync(join(folder, META_FILE), '{"empty_catalogue": "yes", "when": 1}');
    const checked = await checkUpload(folder, 'flagged');
    expect(checked).toMatchObject({
      ok: false,
      problems: [
        { file: META_FILE, field: 'empty_catalogue', reason: 'must be true or false (got string "yes")' },
        { file: META_FILE, field: 'when', reason: 'unknown field (allowed: empty_catalogue)' },
      ],
    });
  });

  it("checks with the upload's limits, as the builder does: more modules than an upload may hold is refused here", async () => {
    const many = fixtureSnapshot();
    const template = many.modules[0]!;
    many.modules = Array.from({ length: UPLOAD_LIMITS.snapshot.records.modules + 1 }, (_, i) => ({
      ...template,
      id: i + 1,
    }));
    const checked = await checkUpload(writeSnapshotFiles(many), 'many');
    expect(checked.ok).toBe(false);
    if (!checked.ok) {
      expect(checked.problems[0]).toEqual({
        file: 'modules.json',
        reason: 'holds 100,001 records; an upload may hold at most 100,000 records in modules.json',
      });
    }
  }, 60_000);

  it('a .tar.gz over the upload limit is refused unread', async () => {
    const folder = temporaryDirectory('large');
    const archive = join(folder, 'big.tar.gz');
    writeFileSync(archive, '');
    truncateSync(archive, UPLOAD_LIMITS.compressedBytes + 1);

    expect(await checkUpload(archive, 'big.tar.gz')).toEqual({
      ok: false,
      problems: [
        {
          file: 'big.tar.gz',
          reason: `is ${UPLOAD_LIMITS.compressedBytes + 1} bytes; an upload may have at most ${UPLOAD_LIMITS.compressedBytes}`,
        },
      ],
    });
  });

  it('what can be uploaded: a folder or a .tar.gz', async () => {
    const folder = writeSnapshotFiles(fixtureSnapshot());
    expect(await sourceProblem(folder)).toBeUndefined();
    expect(await sourceProblem(join(folder, 'modules.json'))).toMatch(
      /^is not a directory: .*; upload takes a snapshot folder or a \.tar\.gz made from one$/,
    );
    expect(await sourceProblem(join(folder, 'none.tar.gz'))).toBe('no such file');
  });
});
