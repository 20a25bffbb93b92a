import { describe, expect, it } from 'vitest';
import { publishUpload } from '../../../builder/upload/publish-upload.js';
import type { UploadReport } from '../../../builder/upload/report.js';
import { catalogueWrites, confineWrites, UnownedWriteError } from '../../../store/layout.js';
import { smallSnapshot, snapshotArchive } from '../../helpers/builder.js';
import { uploadBed } from '../../helpers/uploads.js';

const bed = uploadBed('names-test', '');
const { upload, handle } = bed;
async function stored(key: string): Promise<Buffer | undefined> {
  const read = await bed.settings.store.get(key);
  return read.ok ? read.body : undefined;
}

describe('upload names', () => {
  it('incoming/../current.tar.gz is refused, its report under reports/, and the live pointer untouched', async () => {
    const published = await handle(await upload('incoming/0001.tar.gz', snapshotArchive(smallSnapshot(20))));
    expect(published.outcome).toBe('published');
    const pointer = await stored('current.json');

    const report = await handle(
      await upload('incoming/../current.tar.gz', snapshotArchive(smallSnapshot(21))),
    );

    expect(report).toMatchObject({
      upload: 'incoming/../current.tar.gz',
      outcome: 'invalid',
      version: published.version,
    });
    expect(report.report).toMatch(/^reports\/invalid-names\/current\.tar\.gz-[0-9a-f]{12}\.json$/);
    expect(report.problems[0]?.reason).toMatch(/^an upload's name is letters, digits, "\.", "_" and "-"/);
    expect(JSON.parse((await stored(report.report))!.toString())).toEqual(report);
    expect(await stored('current.json')).toEqual(pointer);
  });

  it('names with % and + each get a report of their own, never another upload’s', async () => {
    const keys = [
      'incoming/a+b.tar.gz',
      'incoming/a b.tar.gz',
      'incoming/100%.tar.gz',
      'incoming/%41.tar.gz',
    ];
    const reports: UploadReport[] = [];
    for (const key of keys) reports.push(await handle(await upload(key, snapshotArchive(smallSnapshot(20)))));

    expect(reports.map((report) => report.upload)).toEqual(keys);
    expect(reports.map((report) => report.outcome)).toEqual(['invalid', 'invalid', 'invalid', 'invalid']);
    expect(new Set(reports.map((report) => report.report)).size).toBe(keys.length);
    for (const report of reports) {
      expect(report.report).toMatch(/^reports\/invalid-names\/[A-Za-z0-9._-]*-[0-9a-f]{12}\.json$/);
      expect(JSON.parse((await stored(report.report))!.toString()).upload).toBe(report.upload);
    }
    // A valid name that a wrong decoding would have confused with `a+b`: its own report, its own key.
    const valid = await handle(await upload('incoming/a-b.tar.gz', snapshotArchive(smallSnapshot(22))));
    expect(valid).toMatchObject({
      upload: 'incoming/a-b.tar.gz',
      outcome: 'published',
      report: 'reports/a-b.json',
    });
  });

  it('an upload named outside the rules never supersedes a good one', async () => {
    const good = await upload('incoming/b-good.tar.gz', snapshotArchive(smallSnapshot(23)));
    await upload('incoming/zzz later.tar.gz', snapshotArchive(smallSnapshot(24))); // newer, but no upload

    expect(await handle(good)).toMatchObject({ outcome: 'published', counts: { modules: 23 } });
  });

  it('an event key that does not decode is misdirected: logged and alarmed by the callers, nothing written', async () => {
    const record = await upload('incoming/0002.tar.gz', snapshotArchive(smallSnapshot(20)));
    const forged = {
      ...record,
      s3: { ...record.s3, object: { ...record.s3.object, key: 'incoming/%E0%A4%A.tar.gz' } },
    };

    expect(await publishUpload(forged, bed.settings)).toEqual({
      kind: 'misdirected',
      message:
        'an event for incoming/%E0%A4%A.tar.gz, which does not decode as an S3 event key: not handled (no report can be named for it)',
    });
  });

  it('every write of the builder is checked against what it owns, in one place', async () => {
    const store = confineWrites(bed.settings.store, catalogueWrites('catalogue/'));
    for (const key of [
      'catalogue/../current.json',
      'current.json',
      'catalogue/o/../x',
      'catalogue/o/',
      'reports/x',
    ]) {
      await expect(store.put(key, Buffer.from('x'))).rejects.toThrow(UnownedWriteError);
    }
    await expect(store.delete(['catalogue/o/ok', 'catalogue/current.json/..'])).rejects.toThrow(
      UnownedWriteError,
    );
    await store.put('catalogue/o/AAAAAAAAAAAAAAAAAAAAAA', Buffer.from('x'));
    await store.put('catalogue/current.json', Buffer.from('{}'));
    expect(await stored('catalogue/o/AAAAAAAAAAAAAAAAAAAAAA')).toEqual(Buffer.from('x'));
  });
});
