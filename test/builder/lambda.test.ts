/**
 * The upload builder's Lambda handler (builder/lambda.ts) as the function runs it, against s3rver and a
 * loopback EventBridge, with role credentials in the environment as Lambda sets them (s3rver refuses them: the
 * handler must sign its local S3 calls with the local ones): each outcome reported as an event on the bus
 * (its problems cut for the event, the first 1,000 in the report object), a failed publish thrown so that Lambda
 * retries it and the alarm counts it; an event that could not be sent sent again by the retry, the report
 * untouched; a duplicate delivery the same; a bomb of `{}` refused in bounded memory; nesting 200,000 levels
 * deep and a repeated id refused with their place, never thrown; a line for every record that is not an upload,
 * which is acknowledged (never a failed invocation: nothing a retry could mend).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type LocalS3, startS3 } from '@catalogue/local-aws';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { s3Client } from '../../aws/sdk.js';
import { takePublishLock } from '../../builder/publish/publish.js';
import { PROBLEM_CAP } from '../../builder/snapshot/problems.js';
import type { S3EventRecord } from '../../builder/upload/event.js';
import { EVENT_PROBLEMS, EVENT_SOURCE } from '../../builder/upload/report.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { badExport, removeTemporaryDirectories, smallSnapshot, snapshotArchive } from '../helpers/builder.js';

let s3: LocalS3;
let client: S3Client;
let bus: Server;
/** While true, the bus answers every PutEvents with a 500 (EventBridge failing). */
let busFailing = false;
const entries: { Source: string; DetailType: string; Detail: string; EventBusName: string }[] = [];
const records: S3EventRecord[] = [];
let handler: typeof import('../../builder/lambda.js').handler;
const context = { getRemainingTimeInMillis: () => 900_000 };
const logged: string[] = [];

beforeAll(async () => {
  s3 = await startS3('builder-fn');
  s3.onEvent((notification) => records.push(...notification.Records));
  // Before the role's credentials are in the environment: the test's own client signs as s3rver expects.
  client = s3Client({ endpoint: s3.endpoint });
  bus = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      expect(request.headers['x-amz-target']).toBe('AWSEvents.PutEvents');
      expect(request.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=\S+\/events\/aws4_request/);
      if (busFailing) {
        response.writeHead(500, { 'content-type': 'application/x-amz-json-1.1' });
        response.end('{"__type":"InternalException","message":"the bus is failing"}');
        return;
      }
      entries.push(...JSON.parse(body).Entries);
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      response.end('{"FailedEntryCount":0,"Entries":[{"EventId":"1"}]}');
    });
  });
  await new Promise<void>((resolve) => bus.listen(0, '127.0.0.1', resolve));
  vi.stubEnv('CATALOGUE_BUCKET', s3.bucket);
  vi.stubEnv('CATALOGUE_PREFIX', 'catalogue/');
  vi.stubEnv('S3_ENDPOINT', s3.endpoint);
  vi.stubEnv('AWS_ENDPOINT_URL_EVENTBRIDGE', `http://127.0.0.1:${(bus.address() as AddressInfo).port}`);
  vi.stubEnv('BUILD_BUDGET_SECONDS', '900'); // no waiting for the lock in these tests
  // As Lambda sets them: the role's credentials, which the local S3 does not know.
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'ASIAROLEKEYOFLAMBDA00');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'role-secret');
  vi.stubEnv('AWS_SESSION_TOKEN', 'role-session');
  // The handler reads its settings when its module loads: loaded afresh, under the settings above (a suite
  // that ran before in this worker may have loaded it under its own: lambda.timeout.test.ts).
  vi.resetModules();
  ({ handler } = await import('../../builder/lambda.js'));
});
afterEach(() => {
  vi.restoreAllMocks();
  logged.length = 0;
  busFailing = false;
});
afterAll(async () => {
  vi.unstubAllEnvs();
  client.destroy();
  await s3.dispose();
  await new Promise((resolve) => bus.close(resolve));
  removeTemporaryDirectories();
});

/** Capture the handler's log lines (JSON, one per line). */
function captureLog() {
  vi.spyOn(console, 'log').mockImplementation((line: string) => {
    logged.push(line);
  });
}
const messages = () => logged.map((line) => JSON.parse(line) as { level: string; message: string });

async function upload(name: string, body: Buffer): Promise<S3EventRecord> {
  await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `incoming/${name}`, Body: body }));
  return records.findLast((record) => record.s3.object.key === `incoming/${name}`)!;
}
const lastDetail = () => JSON.parse(entries.at(-1)!.Detail);
const reportEtag = async (key: string) =>
  (await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }))).ETag;

describe('the upload builder function', () => {
  it('publishes an upload and puts one event on the default bus, signing its local S3 calls with the local credentials', async () => {
    const record = await upload('01.tar.gz', snapshotArchive(smallSnapshot(20)));
    captureLog();

    await handler({ Records: [record] }, context);

    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      Source: EVENT_SOURCE,
      DetailType: 'Catalogue upload published',
      EventBusName: 'default',
    });
    expect(lastDetail()).toMatchObject({
      upload: 'incoming/01.tar.gz',
      outcome: 'published',
      counts: { modules: 20 },
      report: 'reports/01.json',
      event_id: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
  });

  it('refuses an invalid upload with an event that carries the first problems, the report all of them', async () => {
    const broken = smallSnapshot(30);
    for (const module of broken.modules) module.hp = 0;
    const record = await upload('02.tar.gz', snapshotArchive(broken));
    captureLog();

    await handler({ Records: [record] }, context);

    expect(entries.at(-1)?.DetailType).toBe('Catalogue upload refused');
    const detail = lastDetail();
    expect(detail.problem_count).toBe(30);
    expect(detail.problems).toHaveLength(Math.min(30, EVENT_PROBLEMS));
    const report = await new S3ObjectStore({ client, bucket: s3.bucket }).get('reports/02.json');
    expect(report.ok && JSON.parse(report.body.toString()).problems).toHaveLength(30);
  });

  it('throws when the publish failed (Lambda retries; the failure alarm counts it), after its event', async () => {
    const lock = await takePublishLock(new S3ObjectStore({ client, bucket: s3.bucket }), 'catalogue/');
    const record = await upload('03.tar.gz', snapshotArchive(smallSnapshot(21)));
    captureLog();
    try {
      await expect(handler({ Records: [record] }, context)).rejects.toThrow(
        /^incoming\/03\.tar\.gz: publishing failed: another publish holds the target/,
      );
      expect(entries.at(-1)?.DetailType).toBe('Catalogue upload failed');
    } finally {
      await lock.release();
    }
    // Retried once the target is free, the same event publishes: the failed report gives way to the outcome.
    await handler({ Records: [record] }, context);
    expect(lastDetail()).toMatchObject({ upload: 'incoming/03.tar.gz', outcome: 'published' });
  });

  it('refuses the 11.6 KB upload whose modules.json is 10 MiB of {}: over the record limit, its problems counted up to it, the first 1,000 kept', async () => {
    const modules = `[${new Array(Math.floor((10 * 2 ** 20) / 3)).fill('{}').join(',')}]`;
    const archive = snapshotArchive(smallSnapshot(1), { modules });
    expect(archive.byteLength).toBeLessThan(16_000); // 11.6 KB as the finding had it
    const record = await upload('04-bomb.tar.gz', archive);
    captureLog();

    await handler({ Records: [record] }, context);

    const detail = lastDetail();
    expect(entries.at(-1)?.DetailType).toBe('Catalogue upload refused');
    // Every record up to the upload's limit of 100,000 checked (14 fields missing from each), the rest counted.
    expect(detail).toMatchObject({ outcome: 'invalid', problem_count: 1 + 100_000 * 14 });
    expect(detail.problems).toHaveLength(EVENT_PROBLEMS);
    expect(detail.problems.slice(0, 2).map((problem: { message: string }) => problem.message)).toEqual([
      'modules.json: holds 3,495,253 records; an upload may hold at most 100,000 records in modules.json',
      'modules.json: record at index 0: id: is missing',
    ]);
    const report = await new S3ObjectStore({ client, bucket: s3.bucket }).get('reports/04-bomb.json');
    expect(report.ok && JSON.parse(report.body.toString()).problems).toHaveLength(PROBLEM_CAP);
    expect(messages().at(-1)?.message).toBe(
      'incoming/04-bomb.tar.gz: refused, 1,400,001 problems; nothing was written (reports/04-bomb.json)',
    );
  }, 60_000);

  it('refuses a bad export of 70,000 modules with two wrong fields each: 140,000 problems, refused, not failed', async () => {
    const record = await upload('04-export.tar.gz', snapshotArchive(badExport(70_000)));
    captureLog();

    await handler({ Records: [record] }, context); // no throw: nothing to retry, no alarm

    expect(entries.at(-1)?.DetailType).toBe('Catalogue upload refused');
    const detail = lastDetail();
    expect(detail).toMatchObject({ outcome: 'invalid', problem_count: 140_000 });
    expect(detail.problems.slice(0, 2).map((problem: { message: string }) => problem.message)).toEqual([
      'modules.json: record 1: hp: must be a positive integer (got number 0)',
      'modules.json: record 1: depth_mm: must be a positive number or null (got number -5)',
    ]);
    const report = await new S3ObjectStore({ client, bucket: s3.bucket }).get('reports/04-export.json');
    expect(report.ok && JSON.parse(report.body.toString()).problems).toHaveLength(PROBLEM_CAP);
  }, 60_000);

  it.each([
    [
      'a record nested 200,000 levels (18.8 KB): refused as a problem, not a stack overflow thrown',
      { modules: `[${'['.repeat(200_000)}${']'.repeat(200_000)}]` },
      "modules.json: record at index 0: line 1, column 65: nests arrays and objects deeper than 64 levels (counting the file's outermost value as one; a module needs four): it is refused unread; nest less deeply",
    ],
    [
      'a module with a field nested 5,000 levels (17 KB; the handler threw from 5,000)',
      { modules: `[{"id":1,"x":${'['.repeat(5_000)}${']'.repeat(5_000)}}]` },
      "modules.json: record at index 0: line 1, column 76: nests arrays and objects deeper than 64 levels (counting the file's outermost value as one; a module needs four): it is refused unread; nest less deeply",
    ],
    [
      'an id written twice, the last of which JSON.parse would keep',
      { modules: JSON.stringify(smallSnapshot(2).modules).replace('"id":101,', '"id":101,"id":990101,') },
      'modules.json: record at index 0: id: line 1, column 12: repeats a name of its object (first at line 1, column 3): JSON.parse would keep only the last of the two, so one would be lost without a word; a name may appear once in an object (RFC 7493): remove one',
    ],
  ])('refuses %s, with its place; the invocation succeeds', async (_, raw, message) => {
    const name = `04-exact-${entries.length}.tar.gz`; // sorts before the next tests' uploads (the newest wins)
    const record = await upload(name, snapshotArchive(smallSnapshot(2), raw));
    captureLog();

    await handler({ Records: [record] }, context); // no throw: nothing to retry, no alarm

    expect(entries.at(-1)?.DetailType).toBe('Catalogue upload refused');
    expect(lastDetail()).toMatchObject({ outcome: 'invalid', problem_count: 1, error: null });
    expect(lastDetail().problems.map((problem: { message: string }) => problem.message)).toEqual([message]);
  });

  it('when EventBridge fails after a publish: the invocation fails, and the retry sends the same event, the report untouched', async () => {
    const record = await upload('05.tar.gz', snapshotArchive(smallSnapshot(22)));
    captureLog();
    busFailing = true;
    const sent = entries.length;

    await expect(handler({ Records: [record] }, context)).rejects.toThrow(
      /^incoming\/05\.tar\.gz: the event of its outcome \(published\) could not be sent: EventBridge PutEvents failed \(HTTP 500/,
    );
    expect(entries).toHaveLength(sent);
    const etag = await reportEtag('reports/05.json');

    busFailing = false;
    await handler({ Records: [record] }, context); // Lambda's retry of the same event

    expect(entries).toHaveLength(sent + 1);
    expect(entries.at(-1)?.DetailType).toBe('Catalogue upload published');
    const detail = lastDetail();
    expect(detail).toMatchObject({
      upload: 'incoming/05.tar.gz',
      outcome: 'published',
      counts: { modules: 22 },
    });
    expect(await reportEtag('reports/05.json')).toBe(etag);
    expect(messages().at(-1)?.message).toMatch(
      /^incoming\/05\.tar\.gz: published version \S+ .* \(reported before: its event is sent again\)$/,
    );
  });

  it('a duplicate S3 delivery sends the same event again (same event_id) and rewrites nothing', async () => {
    const record = await upload('06.tar.gz', snapshotArchive(smallSnapshot(23)));
    captureLog();
    await handler({ Records: [record] }, context);
    const first = lastDetail();
    const etag = await reportEtag('reports/06.json');

    await handler({ Records: [record] }, context);

    const second = lastDetail();
    expect(second).toEqual(first);
    expect(second.outcome).toBe('published');
    expect(await reportEtag('reports/06.json')).toBe(etag);
  });

  it('when the bucket does not answer, the invocation fails saying so (Lambda retries it), after every record', async () => {
    const record = await upload('08.tar.gz', snapshotArchive(smallSnapshot(20)));
    captureLog();
    await s3.stop();
    try {
      await expect(handler({ Records: [record, record] }, context)).rejects.toThrow(
        /^incoming\/08\.tar\.gz: its report could not be read or written: [\s\S]*\nincoming\/08\.tar\.gz: its report/,
      );
    } finally {
      await s3.start();
    }
    expect(messages().map((line) => line.level)).toEqual(['error', 'error']);
  }, 60_000);

  it('logs and acknowledges what is not an upload: empty, S3’s test event, foreign events and records, keys elsewhere', async () => {
    const record = await upload('07.tar.gz', snapshotArchive(smallSnapshot(20)));
    captureLog();

    // None of these fails the invocation: Lambda would retry it twice for nothing, and the alarm would fire.
    await handler({ Records: [] }, context);
    await handler({ Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: s3.bucket }, context);
    await handler({ 'detail-type': 'Scheduled Event', source: 'aws.events' }, context);
    await handler({}, context);
    await handler(null, context);
    await handler('incoming/07.tar.gz', context);
    await handler({ Records: 'incoming/07.tar.gz' }, context);
    const outside = {
      ...record,
      s3: { ...record.s3, object: { ...record.s3.object, key: 'versions/x.tar.gz' } },
    };
    const otherBucket = { ...record, s3: { ...record.s3, bucket: { name: 'someone-else' } } };
    const sqs = { eventSource: 'aws:sqs', body: '{}' } as unknown as S3EventRecord;
    const undecodable = {
      ...record,
      s3: { ...record.s3, object: { ...record.s3.object, key: 'incoming/%E0%A4%A.tar.gz' } },
    };
    await handler(
      { Records: [outside, otherBucket, sqs, null, 'x', undecodable] as unknown as S3EventRecord[] },
      context,
    );

    expect(messages()).toEqual([
      { level: 'info', message: 'an event with no records: nothing to do' },
      {
        level: 'info',
        message: "S3's test event (sent when the bucket's notification is set up): nothing to do",
      },
      {
        level: 'warn',
        message:
          "not an S3 event notification (an object with detail-type, source): acknowledged, nothing done; the function handles the S3 events of its bucket's incoming prefix",
      },
      {
        level: 'warn',
        message:
          "not an S3 event notification (an object with no fields): acknowledged, nothing done; the function handles the S3 events of its bucket's incoming prefix",
      },
      {
        level: 'warn',
        message:
          "not an S3 event notification (null): acknowledged, nothing done; the function handles the S3 events of its bucket's incoming prefix",
      },
      {
        level: 'warn',
        message:
          "not an S3 event notification (string): acknowledged, nothing done; the function handles the S3 events of its bucket's incoming prefix",
      },
      {
        level: 'warn',
        message:
          "not an S3 event notification (an object with Records): acknowledged, nothing done; the function handles the S3 events of its bucket's incoming prefix",
      },
      {
        level: 'warn',
        message:
          "versions/x.tar.gz is outside the incoming prefix incoming/: not an upload, not handled (the function's trigger sends only keys under it)",
      },
      {
        level: 'warn',
        message: `an event of bucket someone-else, not ${s3.bucket}: acknowledged, not handled`,
      },
      {
        level: 'warn',
        message:
          'a record that is not an S3 event notification (eventSource aws:sqs): acknowledged, not handled',
      },
      {
        level: 'warn',
        message:
          'a record that is not an S3 event notification (eventSource undefined): acknowledged, not handled',
      },
      {
        level: 'warn',
        message:
          'a record that is not an S3 event notification (eventSource undefined): acknowledged, not handled',
      },
      {
        level: 'warn',
        message:
          'an event for incoming/%E0%A4%A.tar.gz, which does not decode as an S3 event key: not handled (no report can be named for it)',
      },
    ]);
    // Nothing was published or reported for any of them.
    expect(await new S3ObjectStore({ client, bucket: s3.bucket }).get('reports/07.json')).toEqual({
      ok: false,
      reason: 'not-found',
    });
  });

  it('an event mixing an upload with records that are not: the upload is published, the rest acknowledged', async () => {
    const record = await upload('09.tar.gz', snapshotArchive(smallSnapshot(22)));
    const outside = {
      ...record,
      s3: { ...record.s3, object: { ...record.s3.object, key: 'elsewhere/09.tar.gz' } },
    };
    const otherBucket = { ...record, s3: { ...record.s3, bucket: { name: 'someone-else' } } };
    captureLog();

    await handler({ Records: [outside, record, otherBucket] }, context);

    expect(messages().map((line) => line.level)).toEqual(['warn', 'info', 'warn']);
    expect(lastDetail()).toMatchObject({ upload: 'incoming/09.tar.gz', outcome: 'published' });
  });

  it('an event mixing a failing upload with records that are not: it fails for the upload alone, naming it', async () => {
    const lock = await takePublishLock(new S3ObjectStore({ client, bucket: s3.bucket }), 'catalogue/');
    const record = await upload('10.tar.gz', snapshotArchive(smallSnapshot(23)));
    const otherBucket = { ...record, s3: { ...record.s3, bucket: { name: 'someone-else' } } };
    captureLog();
    try {
      const failing = handler({ Records: [otherBucket, record] }, context);
      await expect(failing).rejects.toThrow(
        /^incoming\/10\.tar\.gz: publishing failed: another publish holds the target/,
      );
      await expect(failing).rejects.not.toThrow(/someone-else/);
    } finally {
      await lock.release();
    }
  });
});
