import { beforeAll, describe, expect, it } from 'vitest';
import { takePublishLock } from '../../../builder/publish/publish.js';
import { readHistory, readLiveVersion } from '../../../builder/publish/versions.js';
import type { S3EventRecord } from '../../../builder/upload/event.js';
import { publishUpload, type UploadSettings } from '../../../builder/upload/publish-upload.js';
import { smallSnapshot, snapshotArchive } from '../../helpers/builder.js';
import { uploadBed } from '../../helpers/uploads.js';

const bed = uploadBed('uploads-test', 'catalogue/');
const upload = (name: string, body: Buffer) => bed.upload(`incoming/${name}`, body);
const handle = (record: S3EventRecord, given?: UploadSettings) => bed.handle(record, given);
let settings: UploadSettings;
beforeAll(() => {
  settings = bed.settings;
});

const live = () => readLiveVersion(settings.store, settings.prefix);
async function catalogueKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const { key } of settings.store.list('catalogue/')) keys.push(key);
  return keys.sort();
}

describe('publishing by upload', () => {
  it('publishes a valid upload, records who uploaded what, and reports it', async () => {
    const record = await upload('0001-first.tar.gz', snapshotArchive(smallSnapshot(20)));

    const report = await handle(record);

    expect(report).toMatchObject({
      upload: 'incoming/0001-first.tar.gz',
      outcome: 'published',
      previous_version: null,
      uploaded_by: record.userIdentity?.principalId,
      counts: { modules: 20, manufacturers: expect.any(Number), objects: expect.any(Number) },
      changes: { build: 'full', objects_removed: 0 },
      problems: [],
      problem_count: 0,
      report: 'reports/0001-first.json',
    });
    expect(report.snapshot).toMatch(/^[0-9a-f]{64}$/);
    expect(await live()).toBe(report.version);
    const stored = await settings.store.get('reports/0001-first.json');
    expect(stored.ok && JSON.parse(stored.body.toString())).toEqual(report);
    const entry = (await readHistory(settings.store, 'catalogue/')).versions.find(
      (e) => e.version === report.version,
    );
    expect(entry?.published).toMatchObject({
      by: record.userIdentity?.principalId,
      via: 'upload',
      snapshot: report.snapshot,
      upload: { key: 'incoming/0001-first.tar.gz', etag: report.etag, sequencer: record.s3.object.sequencer },
      counts: report.counts,
    });
  });

  it('an invalid upload publishes nothing and reports every problem', async () => {
    const before = await catalogueKeys();
    const broken = smallSnapshot(20);
    broken.modules[0]!.hp = -1;
    (broken.modules[1] as unknown as Record<string, unknown>).manufactuer_id = 3;
    broken.modules[2]!.manufacturer_id = 999;
    const record = await upload('0002-broken.tar.gz', snapshotArchive(broken, { tags: '[1,]' }));

    const report = await handle(record);

    expect(report.outcome).toBe('invalid');
    expect(report.problems.map((problem) => problem.message)).toEqual([
      "tags.json: is not valid JSON: line 1, column 4: Unexpected token ']' (JSON allows no comma before it)",
      'modules.json: record 101: hp: must be a positive integer (got number -1)',
      `modules.json: record ${broken.modules[1]!.id}: manufactuer_id: unknown field; did you mean manufacturer_id?`,
      `modules.json: record ${broken.modules[2]!.id}: manufacturer_id: references manufacturer 999, which is not in manufacturers.json`,
    ]);
    expect(report.problem_count).toBe(4);
    expect(report.version).toBe(await live()); // names what stays live
    expect(await catalogueKeys()).toEqual(before);
  });

  it('a damaged archive is refused the same way', async () => {
    const record = await upload('0003-cut.tar.gz', snapshotArchive(smallSnapshot(20)).subarray(0, 300));

    const report = await handle(record);

    expect(report.outcome).toBe('invalid');
    expect(report.problems[0]?.message).toMatch(/^incoming\/0003-cut\.tar\.gz: cannot be decompressed/);
  });

  it('of two uploads, the older one is superseded and the newer published', async () => {
    const older = await upload('0004-a.tar.gz', snapshotArchive(smallSnapshot(21)));
    const newer = await upload('0004-b.tar.gz', snapshotArchive(smallSnapshot(22)));

    const first = await handle(older);
    const second = await handle(newer);

    expect(first).toMatchObject({ outcome: 'superseded', superseded_by: 'incoming/0004-b.tar.gz' });
    expect(second).toMatchObject({ outcome: 'published', counts: { modules: 22 } });
    expect(await live()).toBe(second.version);
    // The older one's event, delivered late, still never publishes over the newer.
    expect(await handle(older)).toMatchObject({ outcome: 'superseded' });
    expect(await live()).toBe(second.version);
  });

  it('an upload overwritten under the same name leaves its event to the newer write; a vanished one to nobody', async () => {
    const first = await upload('0005-same.tar.gz', snapshotArchive(smallSnapshot(23)));
    const second = await upload('0005-same.tar.gz', snapshotArchive(smallSnapshot(24)));

    expect(await publishUpload(first, settings)).toMatchObject({ kind: 'skipped' });
    expect(await handle(second)).toMatchObject({
      outcome: 'published',
      counts: { modules: 24 },
    });
    expect(
      await publishUpload(
        { ...first, s3: { ...first.s3, object: { ...first.s3.object, key: 'incoming/gone.tar.gz' } } },
        settings,
      ),
    ).toMatchObject({
      kind: 'skipped',
      message: expect.stringMatching(/^incoming\/gone\.tar\.gz: nothing to do: the object is gone/),
    });
  });

  it('waits for a publish holding the target; a newer upload arriving meanwhile wins under the lock', async () => {
    const liveBefore = await live();
    const lock = await takePublishLock(settings.store, 'catalogue/');
    const waiting = await upload('0006-a.tar.gz', snapshotArchive(smallSnapshot(25)));
    const notes: string[] = [];
    const progress = { note: (step: string) => notes.push(step), start() {}, update() {}, stop() {} };
    let settledAt = Number.POSITIVE_INFINITY;
    const outcome = handle(waiting, { ...settings, lockWaitMs: 30_000, progress }).finally(() => {
      settledAt = performance.now();
    });
    // Once it waits for the lock, the newer upload comes in.
    await expect
      .poll(() => notes.some((note) => note.startsWith('waiting for the other publish to finish')), {
        timeout: 20_000,
      })
      .toBe(true);
    const newer = await upload('0006-b.tar.gz', snapshotArchive(smallSnapshot(26)));
    const releasedAt = performance.now();
    await lock.release();

    expect(await outcome).toMatchObject({ outcome: 'superseded', superseded_by: 'incoming/0006-b.tar.gz' });
    expect(settledAt).toBeGreaterThan(releasedAt);
    expect(await live()).toBe(liveBefore);
    expect(await handle(newer)).toMatchObject({
      outcome: 'published',
      counts: { modules: 26 },
    });
  }, 30_000);

  it('a publish still holding the target after the wait is a failure, reported, the live version named', async () => {
    const liveBefore = await live();
    const lock = await takePublishLock(settings.store, 'catalogue/');
    try {
      const record = await upload('0007-busy.tar.gz', snapshotArchive(smallSnapshot(27)));
      const report = await handle(record);

      expect(report.outcome).toBe('failed');
      expect(report.error).toMatch(/^another publish holds the target \(prefix catalogue\/\)/);
      expect(report.version).toBe(liveBefore);
    } finally {
      await lock.release();
    }
  });

  it('says what is not an upload, and refuses an upload named outside the rules', async () => {
    const other = await upload('0008-notes.txt', Buffer.from('hi'));
    const elsewhere = { ...other, s3: { ...other.s3, object: { ...other.s3.object, key: 'catalogue/x' } } };
    expect(await publishUpload(elsewhere, settings)).toEqual({
      kind: 'misdirected',
      message:
        "catalogue/x is outside the incoming prefix incoming/: not an upload, not handled (the function's trigger sends only keys under it)",
    });
    expect(await publishUpload({ ...other, eventName: 'ObjectRemoved:Delete' }, settings)).toEqual({
      kind: 'skipped',
      message: 'incoming/0008-notes.txt: ObjectRemoved:Delete is not an upload: nothing to do',
    });
    const odd = await upload('bad name!.tar.gz', snapshotArchive(smallSnapshot(20)));

    const report = await handle(odd);

    expect(report.outcome).toBe('invalid');
    expect(report.report).toMatch(/^reports\/invalid-names\/bad_name_\.tar\.gz-[0-9a-f]{12}\.json$/);
    expect(report.problems[0]?.reason).toMatch(/^an upload's name is letters, digits/);
  });

  it('a retry after the pointer was written but not the report reports published (its own earlier attempt), not unchanged', async () => {
    const record = await upload('0009-retried.tar.gz', snapshotArchive(smallSnapshot(28)));
    const first = await handle(record);
    expect(first.outcome).toBe('published');
    // As if the attempt had been killed between its pointer write and its report.
    await settings.store.delete(['reports/0009-retried.json']);

    const again = await handle(record);

    expect(again).toMatchObject({ outcome: 'published', version: first.version, event_id: first.event_id });
    expect(await live()).toBe(first.version);
  });

  it('an empty catalogue is refused unless the snapshot says it means one', async () => {
    const liveBefore = await live();
    const empty = { ...smallSnapshot(1), modules: [] };
    const refused = await handle(await upload('0010-empty.tar.gz', snapshotArchive(empty)));
    expect(refused).toMatchObject({ outcome: 'invalid', problem_count: 1, version: liveBefore });
    expect(refused.problems[0]?.message).toBe(
      'modules.json: holds no modules: publishing it would empty the catalogue; if that is what you mean, add snapshot.json with {"empty_catalogue": true}',
    );

    const meant = await handle(
      await upload(
        '0011-empty.tar.gz',
        snapshotArchive(empty, {}, { 'snapshot.json': '{"empty_catalogue":true}' }),
      ),
    );
    expect(meant).toMatchObject({ outcome: 'published', counts: { modules: 0 } });
  });
});
