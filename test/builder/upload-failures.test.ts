/**
 * `npm run catalogue -- failed` and `retry NAME` against the local stack's uploads as `npm start` runs them: its
 * S3 (s3rver, in process) recorded in a data directory the CLI finds with no --out, and its upload loop
 * (local/uploads.ts: the stack builder's code, retried twice as Lambda retries). Each build is made to fail
 * for real — the publish lock held by another publish through every attempt, the S3 server stopped, the upload's
 * event never delivered — and then `failed` must list it with its cause and `retry` must publish it; retry's
 * refusals (gone, handled already, still building, a newer upload) write nothing.
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type LocalS3, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordLocalStack } from '../../aws/local-stack.js';
import { s3Client } from '../../aws/sdk.js';
import { main as catalogueCli, EXIT } from '../../builder/cli.js';
import { acquirePublishLock } from '../../builder/publish/lock.js';
import { readHistory, readLiveVersion } from '../../builder/publish/versions.js';
import type { S3EventNotification } from '../../builder/upload/event.js';
import type { UploadResult } from '../../builder/upload-command.js';
import type { UploadFailures } from '../../builder/upload-failures.js';
import { acceptUploads, type LocalUploads } from '../../local/uploads.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { UPLOAD_PREFIXES } from '../../store/upload-prefixes.js';
import {
  removeTemporaryDirectories,
  smallSnapshot,
  snapshotArchive,
  temporaryDirectory,
} from '../helpers/builder.js';
import { codeBlocks, readPage, sectionAt } from '../helpers/manual.js';
import { linesShow, varying } from '../helpers/shown.js';

const BUCKET = 'catalogue';
let s3: LocalS3;
let client: S3Client;
let store: S3ObjectStore;
const logged: string[] = [];
let loop: LocalUploads | undefined;
/** Where the loop's events come from: the local S3's, unless a test holds them back. */
let deliver = true;
const listeners = new Set<(notification: S3EventNotification) => void>();

beforeAll(async () => {
  const local = temporaryDirectory('upload-failures-local');
  s3 = await startS3(BUCKET);
  // As npm start records what it serves once it is ready (local/start.ts); only its S3 is reached here.
  recordLocalStack(local, {
    pid: process.pid,
    s3: s3.endpoint,
    bucket: BUCKET,
    prefix: '',
    dynamodb: 'http://127.0.0.1:9',
    keysTable: 'keys',
    countersTable: 'counters',
    api: 'http://127.0.0.1:9/v1',
  });
  process.env.CATALOGUE_LOCAL_DIR = local;
  client = s3Client({ endpoint: s3.endpoint });
  store = new S3ObjectStore({ client, bucket: BUCKET });
  s3.onEvent((notification) => {
    if (!deliver) return;
    for (const listener of listeners) listener(notification);
  });
  loop = acceptUploads(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    {
      store,
      bucket: BUCKET,
      prefix: '',
      ...UPLOAD_PREFIXES,
      log: (line) => logged.push(line),
      retryDelaysMs: [150, 150],
      lockWaitMs: 300,
      catchUp: false,
    },
  );
}, 60_000);
afterAll(async () => {
  await loop?.close();
  delete process.env.CATALOGUE_LOCAL_DIR;
  client?.destroy();
  await s3?.dispose();
  removeTemporaryDirectories();
});

/** The CLI in this process: exit code, stdout and stderr. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const [stdout, stderr] = [process.stdout.write, process.stderr.write];
  process.stdout.write = ((text: unknown) => {
    out += String(text);
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((text: unknown) => {
    err += String(text);
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: await catalogueCli(args), out, err };
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
}

/** Upload a snapshot of `modules` modules named `name` (first module renamed `label`), as a publisher does. */
async function upload(name: string, label: string, modules = 20): Promise<void> {
  const snapshot = smallSnapshot(modules);
  snapshot.modules[0]!.name = label;
  await client.send(
    new PutObjectCommand({ Bucket: BUCKET, Key: `incoming/${name}.tar.gz`, Body: snapshotArchive(snapshot) }),
  );
}

/** Wait until the upload loop logged a line matching `pattern` (from `from` on). */
async function loggedLine(pattern: RegExp, from = 0, timeoutMs = 60_000): Promise<string> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const line = logged.slice(from).find((candidate) => pattern.test(candidate));
    if (line) return line;
    if (performance.now() > end) throw new Error(`no ${pattern} in:\n${logged.slice(from).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function reportOf(name: string): Promise<Record<string, unknown>> {
  const read = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `reports/${name}.json` }));
  return JSON.parse(await read.Body!.transformToString());
}

/** Which upload the live version was published from (its history entry records it). */
const liveUpload = async () => {
  const version = await readLiveVersion(store, '');
  const entry = (await readHistory(store, '')).versions.find((candidate) => candidate.version === version);
  return entry?.published?.upload?.key;
};

/** The listing the publisher's guide shows (docs/publishing.md, "Failed uploads"), without its command line. */
function guideListing(): string[] {
  const guide = readPage('docs/publishing.md');
  const block = codeBlocks(guide).find(
    (candidate) =>
      candidate.info === 'console' &&
      sectionAt(guide, candidate.line) === 'Failed uploads: `failed` and `retry`',
  );
  if (!block) throw new Error('docs/publishing.md shows no failed listing');
  return block.lines.filter((line) => !line.startsWith('$ '));
}

/** Wait until the wall clock is in the next whole second (S3 listings time uploads to the second). */
async function nextSecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));
}

const failedJson = async (...args: string[]) => {
  const { code, out } = await cli('failed', '--json', ...args);
  return { code, listing: JSON.parse(out) as UploadFailures & { exit_code: number } };
};

describe('failed and retry against the local stack', () => {
  it('a build that fails through every attempt (the lock held by another publish) is listed with its cause; a newer upload keeps retry from publishing it over that one, --force does', async () => {
    const lock = await acquirePublishLock(store, '', 's3://catalogue/');
    const from = logged.length;
    try {
      await upload('20260601T120000.123Z-73bcfbfa6212', 'Locked out');
      await loggedLine(
        /upload incoming\/20260601T120000.123Z-73bcfbfa6212\.tar\.gz: no attempt left; npm run catalogue -- failed lists it/,
        from,
      );
    } finally {
      await lock.release();
    }
    expect(
      logged
        .slice(from)
        .filter((line) => /20260601T120000.123Z-73bcfbfa6212\.tar\.gz: publishing failed/.test(line)),
    ).toHaveLength(3);

    const listed = await cli('failed');
    expect(listed.code).toBe(EXIT.failedUploads);
    // As the publisher's guide shows it.
    expect(linesShow(guideListing(), listed.out.trimEnd().split('\n').map(varying)), listed.out).toBe(true);
    expect(listed.out).toMatch(
      /incoming\/: 1 of 1 uploads failed or went 5 minutes without a report, newest first/,
    );
    expect(listed.out).toMatch(
      /incoming\/20260601T120000.123Z-73bcfbfa6212\.tar\.gz {2}failed \(uploaded \S+ \S+Z, last attempt \S+ \S+Z\): another publish holds the target/,
    );
    expect(listed.out).toContain(
      'to run it again: npm run catalogue -- retry 20260601T120000.123Z-73bcfbfa6212\n',
    );

    // A newer upload is published meanwhile (its name sorts after: uploads within one second are ordered by
    // name): retrying the older one would publish it over that one.
    await upload('20260601T120001Z-newer', 'The newer one');
    await loggedLine(/upload incoming\/20260601T120001Z-newer\.tar\.gz: published version/);
    const { code, listing } = await failedJson();
    expect(code).toBe(EXIT.failedUploads);
    expect(listing.failed).toEqual([
      expect.objectContaining({
        upload: 'incoming/20260601T120000.123Z-73bcfbfa6212.tar.gz',
        name: '20260601T120000.123Z-73bcfbfa6212',
        status: 'failed',
        cause: expect.stringMatching(/^another publish holds the target/),
        newer: { upload: 'incoming/20260601T120001Z-newer.tar.gz', outcome: 'published' },
        report_uri: 's3://catalogue/reports/20260601T120000.123Z-73bcfbfa6212.json',
      }),
    ]);
    const reportBefore = await reportOf('20260601T120000.123Z-73bcfbfa6212');

    const refused = await cli('retry', '20260601T120000.123Z-73bcfbfa6212');
    expect(refused.code).toBe(EXIT.refused);
    expect(refused.out).toMatch(
      /^retry refused: a newer upload, incoming\/20260601T120001Z-newer\.tar\.gz \(published\), came after incoming\/20260601T120000.123Z-73bcfbfa6212\.tar\.gz: .*add --force.*; nothing was written\n$/,
    );
    expect(await reportOf('20260601T120000.123Z-73bcfbfa6212')).toEqual(reportBefore);
    expect(await liveUpload()).toBe('incoming/20260601T120001Z-newer.tar.gz');

    // Uploads completed within one second are ordered by name, and the newer one's sorts after: the forced
    // write must land in a later second than that upload's to be the newest (as any publisher's would).
    await nextSecond();
    const forced = await cli('retry', '20260601T120000.123Z-73bcfbfa6212.tar.gz', '--force', '--json');
    expect(forced.code, forced.out + forced.err).toBe(EXIT.ok);
    const result = JSON.parse(forced.out) as UploadResult;
    expect(result).toMatchObject({
      outcome: 'published',
      upload: 'incoming/20260601T120000.123Z-73bcfbfa6212.tar.gz',
    });
    expect(forced.err).toMatch(
      /^uploaded incoming\/20260601T120000.123Z-73bcfbfa6212\.tar\.gz again \(the same [\d.]+ kB\) to s3:\/\/catalogue/,
    );
    expect(await liveUpload()).toBe('incoming/20260601T120000.123Z-73bcfbfa6212.tar.gz');
    expect(await reportOf('20260601T120000.123Z-73bcfbfa6212')).toMatchObject({
      outcome: 'published',
      version: result.version,
    });
    expect((await cli('failed')).code).toBe(EXIT.ok);
  }, 120_000);

  it('an upload whose event never came is listed as having no report once --after has passed, and retry publishes it', async () => {
    deliver = false;
    try {
      await upload('20260601T120002Z-unannounced', 'Never announced');
    } finally {
      deliver = true;
    }
    // Too recent to call lost by default: listed as waiting, not failed.
    const recent = await failedJson();
    expect(recent.code).toBe(EXIT.ok);
    expect(recent.listing.waiting.map((entry) => entry.upload)).toEqual([
      'incoming/20260601T120002Z-unannounced.tar.gz',
    ]);
    const early = await cli('retry', '20260601T120002Z-unannounced');
    expect(early.code).toBe(EXIT.refused);
    expect(early.out).toMatch(
      /has no report yet, but was uploaded only 0 minutes ago: the builder may still be at it/,
    );

    const lost = await cli('failed', '--after', '0');
    expect(lost.code).toBe(EXIT.failedUploads);
    expect(lost.out).toMatch(
      /incoming\/20260601T120002Z-unannounced\.tar\.gz {2}no report after 0 minutes \(uploaded \S+ \S+Z\): the builder never finished an attempt/,
    );

    const retried = await cli('retry', '20260601T120002Z-unannounced', '--after', '0');
    expect(retried.code).toBe(EXIT.ok);
    expect(retried.out).toMatch(/^published version \S+ \(was \S+\): 20 modules;/);
    expect(await liveUpload()).toBe('incoming/20260601T120002Z-unannounced.tar.gz');
    expect((await cli('failed', '--after', '0')).code).toBe(EXIT.ok);
    // The same through --out, as on the stack: the bucket named, the endpoint given.
    const named = await cli(
      'failed',
      '--after',
      '0',
      '--out',
      's3://catalogue/incoming/',
      '--endpoint',
      s3.endpoint,
    );
    expect(named.code).toBe(EXIT.ok);
    expect(named.out).toMatch(
      /^s3:\/\/catalogue at http:\/\/127\.0\.0\.1:\d+, incoming\/: none of 3 uploads failed or went 0 minutes without a report\n$/,
    );
  }, 120_000);

  it('the S3 server stopped through every attempt: no report can be written, failed lists it once the server is back, retry publishes it', async () => {
    deliver = false;
    let held: S3EventNotification | undefined;
    const unhook = s3.onEvent((notification) => {
      held = notification;
    });
    try {
      await upload('20260601T120003Z-s3-down', 'Built while S3 was down');
    } finally {
      unhook();
      deliver = true;
    }
    const from = logged.length;
    await s3.stop();
    try {
      for (const listener of listeners) listener(held!);
      await loggedLine(
        /upload incoming\/20260601T120003Z-s3-down\.tar\.gz: no attempt could write its report/,
        from,
      );
    } finally {
      await s3.start();
    }
    expect(
      logged
        .slice(from)
        .filter((line) => /20260601T120003Z-s3-down\.tar\.gz: its report could not be written/.test(line)),
    ).toHaveLength(3);

    const { code, listing } = await failedJson('--after', '0');
    expect(code).toBe(EXIT.failedUploads);
    expect(listing.failed).toEqual([
      expect.objectContaining({
        upload: 'incoming/20260601T120003Z-s3-down.tar.gz',
        status: 'no_report',
        cause: 'no report after 0 minutes',
        newer: null,
      }),
    ]);

    const retried = await cli('retry', 'incoming/20260601T120003Z-s3-down.tar.gz', '--force');
    expect(retried.code).toBe(EXIT.ok);
    expect(await liveUpload()).toBe('incoming/20260601T120003Z-s3-down.tar.gz');
  }, 120_000);

  it('the S3 server back between attempts: the upload loop tries again as Lambda would, and publishes', async () => {
    // A loop of its own, whose retries leave the server time to come back (2 s, then 20 s).
    let listener: ((notification: S3EventNotification) => void) | undefined;
    const own: string[] = [];
    const patient = acceptUploads(
      (given) => {
        listener = given;
        return () => {
          listener = undefined;
        };
      },
      {
        store,
        bucket: BUCKET,
        prefix: '',
        ...UPLOAD_PREFIXES,
        log: (line) => own.push(line),
        retryDelaysMs: [2_000, 20_000],
        catchUp: false,
      },
    );
    deliver = false;
    let held: S3EventNotification | undefined;
    const unhook = s3.onEvent((notification) => {
      held = notification;
    });
    try {
      await upload('20260601T120004Z-s3-back', 'Built once S3 was back');
    } finally {
      unhook();
      deliver = true;
    }
    try {
      await s3.stop();
      try {
        listener!(held!);
        const end = performance.now() + 30_000;
        while (!own.some((line) => /20260601T120004Z-s3-back\.tar\.gz: trying again in 2 s/.test(line))) {
          if (performance.now() > end) throw new Error(own.join('\n'));
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        await s3.start();
      }
      const end = performance.now() + 60_000;
      while (
        !own.some((line) =>
          /upload incoming\/20260601T120004Z-s3-back\.tar\.gz: published version/.test(line),
        )
      ) {
        if (performance.now() > end) throw new Error(own.join('\n'));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await patient.close();
    }
    expect(own[0]).toMatch(
      /^upload incoming\/20260601T120004Z-s3-back\.tar\.gz: its report could not be written/,
    );
    expect(await reportOf('20260601T120004Z-s3-back')).toMatchObject({ outcome: 'published' });
  }, 120_000);

  it('refuses what it cannot retry, writing nothing: a name that is not an upload’s, one not there, one handled already', async () => {
    expect((await cli('retry', '../current')).code).toBe(EXIT.usage);
    expect((await cli('retry')).code).toBe(EXIT.usage);

    const gone = await cli('retry', '9999-never-uploaded');
    expect(gone.code).toBe(EXIT.refused);
    expect(gone.out).toMatch(
      /^retry refused: incoming\/9999-never-uploaded\.tar\.gz is not in the incoming prefix/,
    );

    const handled = await cli('retry', '20260601T120001Z-newer', '--force');
    expect(handled.code).toBe(EXIT.refused);
    expect(handled.out).toMatch(
      /^retry refused: the builder has its final word on incoming\/20260601T120001Z-newer\.tar\.gz: incoming\/20260601T120001Z-newer\.tar\.gz: published version/,
    );

    const elsewhere = await cli('failed', '--out', 's3://catalogue/catalogue');
    expect(elsewhere.code).toBe(EXIT.usage);
    expect(elsewhere.err).toMatch(/^--out s3:\/\/catalogue\/catalogue: failed takes the stack's bucket/);
  });
});
