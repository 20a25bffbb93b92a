/**
 * The local S3's store on a disk that fills up (src/s3rver-store.ts), on a really small disk (a tmpfs:
 * test/helpers/small-disk.ts) and with writers really killed:
 * - bulk (content objects, uploads) refused with 507 before it eats the reserve, bookkeeping (a report, the
 *   lock) still written into it, and the server answering on;
 * - a disk filled by something else: the write that finds no room answers 507 and stores nothing, the server
 *   lives, and once there is room the same write succeeds;
 * - objects an earlier version half wrote (bytes without metadata, metadata cut short) are never listed and
 *   are removed where they are found;
 * - a writer killed with SIGKILL at random moments while it overwrites one key: after a restart the key
 *   holds one whole object whose ETag is its bytes' MD5, and nothing is left in staging.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBulk, reserveBytes } from '../src/s3rver-store.js';
import { type LocalS3, startS3 } from '../src/servers.js';
import { mountSmallDisk, SMALL_DISK_REFUSED, type SmallDisk } from '../src/small-disk.js';
import { s3Client } from './helpers/aws.js';

const BUCKET = 'disk';
/** Bulk as npm start has it (local/own-servers.ts, PRODUCT_S3): content objects at any depth, and uploads. */
const BULK = { anyDepth: ['o/'], atRoot: ['incoming/'] };
const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');

/** A PUT's outcome: its status, and the S3 error code and message when refused. */
async function put(client: S3Client, key: string, body: Buffer) {
  try {
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
    return { status: 200 };
  } catch (error) {
    const { name, message, $metadata } = error as {
      name: string;
      message: string;
      $metadata?: { httpStatusCode?: number };
    };
    return { status: $metadata?.httpStatusCode, code: name, message };
  }
}

/** Every listed object read back: its ETag is its bytes' MD5, and its length the listed size. */
async function listedWhole(client: S3Client): Promise<{ keys: string[]; broken: string[] }> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  const broken: string[] = [];
  for (const object of listed.Contents ?? []) {
    const read = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: object.Key }));
    const bytes = await read.Body!.transformToByteArray();
    if (`"${md5(bytes)}"` !== read.ETag || bytes.length !== object.Size) broken.push(object.Key!);
  }
  return { keys: (listed.Contents ?? []).map((object) => object.Key!), broken };
}

describe('which writes the reserve is kept from', () => {
  it('bulk: content objects at any prefix and uploads; not the lock, the pointer, version files or reports', () => {
    const bulk = (key: string) => isBulk(key, BULK);
    expect(['o/abc', 'v1/o/abc', 'incoming/a.tar.gz'].map(bulk)).toEqual([true, true, true]);
    expect(['publish.lock', 'current.json', 'versions/x.json', 'reports/a.json', 'io/x'].map(bulk)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    // Nothing is bulk unless said: every write may use the whole disk.
    expect(['o/abc', 'incoming/a.tar.gz', 'x/incoming/a'].map((key) => isBulk(key))).toEqual([
      false,
      false,
      false,
    ]);
    expect(isBulk('x/incoming/a', BULK)).toBe(false);
    expect([reserveBytes(8 * 2 ** 20), reserveBytes(40 * 2 ** 20), reserveBytes(2 ** 40)]).toEqual([
      2 ** 20,
      2 * 2 ** 20,
      16 * 2 ** 20,
    ]);
  });
});

const reason = SMALL_DISK_REFUSED === undefined ? '' : ` (skipped: ${SMALL_DISK_REFUSED})`;

describe.skipIf(SMALL_DISK_REFUSED !== undefined)(`the local S3 on a 16 MiB disk${reason}`, () => {
  let disk: SmallDisk;
  let s3: LocalS3;
  let client: S3Client;
  beforeAll(async () => {
    disk = mountSmallDisk(16);
    s3 = await startS3(BUCKET, { directory: join(disk.path, 's3'), bulk: BULK });
    client = s3Client({ endpoint: s3.endpoint, maxAttempts: 1 });
  });
  afterAll(async () => {
    client?.destroy();
    await s3?.dispose();
    disk?.unmount();
  });

  it('refuses bulk with 507 before the reserve, writes a report into it, and answers on', async () => {
    const body = Buffer.alloc(512 * 1024, 0x62);
    let refused: Awaited<ReturnType<typeof put>> | undefined;
    let stored = 0;
    for (let i = 0; i < 64 && !refused; i++) {
      const outcome = await put(client, `o/object-${i}`, body);
      if (outcome.status === 200) stored++;
      else refused = outcome;
    }
    const report = await put(client, 'reports/upload.json', Buffer.alloc(200 * 1024, 0x7b));
    const lock = await put(client, 'publish.lock', Buffer.from('{}'));

    expect(stored).toBeGreaterThan(10);
    expect(refused).toMatchObject({
      status: 507,
      code: 'InsufficientStorage',
      message: expect.stringMatching(
        /^The local S3's disk is nearly full: .* free in .*, and it keeps 1\.0 MB for reports/,
      ),
    });
    expect(disk.free()).toBeGreaterThan(0);
    expect([report.status, lock.status]).toEqual([200, 200]);
    const { keys, broken } = await listedWhole(client);
    expect(keys).toHaveLength(stored + 2);
    expect(broken).toEqual([]);
  });

  it('answers a write that finds the disk full with 507, stores nothing, and takes it once there is room', async () => {
    const filler = disk.fill(64 * 1024);
    const body = Buffer.alloc(300 * 1024, 0x63);

    const full = await put(client, 'reports/full.json', body);
    const head = await client
      .send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'reports/full.json' }))
      .catch((e) => e);
    const staging = readdirSync(join(disk.path, 's3', BUCKET, '._S3rver_staging'));
    rmSync(filler);
    const again = await put(client, 'reports/full.json', body);

    expect(full).toMatchObject({
      status: 507,
      code: 'InsufficientStorage',
      message: expect.stringContaining('No space left'),
    });
    expect((head as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(404);
    expect(staging).toEqual([]);
    expect(again.status).toBe(200);
    expect((await listedWhole(client)).broken).toEqual([]);
  });

  it('never lists what an earlier version half wrote, and removes it where it is found', async () => {
    const folder = join(disk.path, 's3', BUCKET, 'o');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'cut._S3rver_object'), Buffer.alloc(1000, 1)); // bytes, no metadata
    writeFileSync(join(folder, 'empty._S3rver_object'), Buffer.alloc(0));
    writeFileSync(join(folder, 'empty._S3rver_metadata.json'), ''); // metadata cut short

    const { keys, broken } = await listedWhole(client);
    const read = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'o/cut' })).catch((e) => e);

    expect(keys).not.toContain('o/cut');
    expect(keys).not.toContain('o/empty');
    expect(broken).toEqual([]);
    expect((read as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(404);
    expect(existsSync(join(folder, 'cut._S3rver_object'))).toBe(false);
    expect(existsSync(join(folder, 'empty._S3rver_object'))).toBe(false);
  });
});

describe('writes cut between their renames, and readers beside writers', () => {
  const directory = mkdtempSync(join(tmpdir(), 'cat-s3-commit-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  /** Start an S3 on the directory, run `use`, dispose. */
  async function served<T>(use: (client: S3Client) => Promise<T>): Promise<T> {
    const s3 = await startS3(BUCKET, { directory, bulk: BULK });
    const client = s3Client({ endpoint: s3.endpoint, maxAttempts: 1 });
    try {
      return await use(client);
    } finally {
      client.destroy();
      await s3.dispose();
    }
  }
  const read = async (client: S3Client, key: string) => {
    const answer = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    const bytes = Buffer.from(await answer.Body!.transformToByteArray());
    return { text: bytes.toString(), etag: answer.ETag, md5: `"${md5(bytes)}"` };
  };

  it.each([
    ['after its metadata was renamed: the next start finishes it', true, 'new'],
    ['before any rename: the next start drops it', false, 'old'],
  ])('a write killed %s', async (_, renamed, expected) => {
    const key = `cut-${expected}`;
    await served((client) => put(client, key, Buffer.from('old')));
    // What a kill leaves in staging: the staged files and the commit record, the metadata renamed or not.
    const staging = join(directory, BUCKET, '._S3rver_staging');
    mkdirSync(staging, { recursive: true });
    writeFileSync(join(staging, 'w.object'), 'new');
    writeFileSync(join(staging, 'w.md5'), md5(Buffer.from('new')));
    const metadata = JSON.stringify({ 'content-type': 'text/plain' });
    if (renamed) writeFileSync(join(directory, BUCKET, `${key}._S3rver_metadata.json`), metadata);
    else writeFileSync(join(staging, 'w.metadata.json'), metadata);
    writeFileSync(
      join(staging, 'w.commit'),
      JSON.stringify({ bucket: BUCKET, key, body: 'w.object', metadata: 'w.metadata.json', md5: 'w.md5' }),
    );

    const after = await served((client) => read(client, key));

    expect(after.text).toBe(expected);
    expect(after.etag).toBe(after.md5);
    expect(existsSync(staging)).toBe(false);
  });

  it('readers beside a writer that overwrites a key never leave an ETag that is not its bytes', async () => {
    await served(async (client) => {
      let writing = true;
      const readers = Array.from({ length: 4 }, async () => {
        while (writing) {
          await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'pointer' })).catch(() => undefined);
          await client.send(new ListObjectsV2Command({ Bucket: BUCKET })).catch(() => undefined);
        }
      });
      for (let i = 0; i < 40; i++) await put(client, 'pointer', Buffer.from(`version ${i}`));
      writing = false;
      await Promise.all(readers);
      const last = await read(client, 'pointer');
      expect(last.text).toBe('version 39');
      expect(last.etag).toBe(last.md5);
    });
  });
});

/** A child process that serves an S3 on `directory` and overwrites key `x` with 4 MiB bodies of one byte each. */
function writer(directory: string) {
  const servers = new URL('../src/servers.ts', import.meta.url).pathname;
  const sdk = new URL('./helpers/aws.ts', import.meta.url).pathname;
  const script = `
    const { startS3 } = await import(${JSON.stringify(servers)});
    const { s3Client } = await import(${JSON.stringify(sdk)});
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    const s3 = await startS3(${JSON.stringify(BUCKET)}, { directory: ${JSON.stringify(directory)}, bulk: ${JSON.stringify(BULK)} });
    const client = s3Client({ endpoint: s3.endpoint });
    console.log('serving');
    for (let i = 1; ; i++) {
      await client.send(new PutObjectCommand({ Bucket: ${JSON.stringify(BUCKET)}, Key: 'x', Body: Buffer.alloc(4 * 2 ** 20, i % 256) }));
    }`;
  return spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

describe('a writer killed with SIGKILL while it overwrites a key', () => {
  const directory = mkdtempSync(join(tmpdir(), 'cat-s3-killed-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('leaves one whole object under the key after a restart, and nothing in staging', async () => {
    for (let round = 0; round < 6; round++) {
      const child = writer(directory);
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk) => String(chunk).includes('serving') && resolve());
        child.once('exit', (code) => reject(new Error(`the writer exited with ${code}`)));
      });
      // Odd rounds: killed while a write is staged (its bytes half on disk); even ones at a moment the writes do
      // not choose (in a write, between writes, in a rename).
      const deadline = performance.now() + 150 + Math.random() * 600;
      const staging = join(directory, BUCKET, '._S3rver_staging');
      const staged = () => existsSync(staging) && readdirSync(staging).length > 0;
      while (performance.now() < deadline && !(round % 2 === 1 && staged())) {
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;

      const s3 = await startS3(BUCKET, { directory, bulk: BULK });
      const client = s3Client({ endpoint: s3.endpoint });
      try {
        const stagingDirectory = join(directory, BUCKET, '._S3rver_staging');
        const staging = existsSync(stagingDirectory) ? readdirSync(stagingDirectory) : [];
        const read = await client
          .send(new GetObjectCommand({ Bucket: BUCKET, Key: 'x' }))
          .catch(() => undefined);
        expect(staging).toEqual([]);
        if (read) {
          const bytes = await read.Body!.transformToByteArray();
          expect(bytes.length).toBe(4 * 2 ** 20);
          expect(new Set(bytes).size).toBe(1);
          expect(read.ETag).toBe(`"${md5(bytes)}"`);
        }
      } finally {
        client.destroy();
        await s3.dispose();
      }
    }
  }, 120_000);
});
