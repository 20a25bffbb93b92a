/**
 * `npm start` on a really small disk (a 40 MiB tmpfs: @catalogue/local-aws/small-disk), as issue 47 found it: an
 * upload whose publish fills the data directory used to end `npm start` (ENOSPC), and after a restart the
 * half-written objects made the listing answer 500 and every full build fail. Here:
 * - the upload's build fails cleanly, its report saying the disk is full (and who uploaded it);
 * - the API and the admin API keep answering;
 * - `npm start` killed with SIGKILL in the middle of that build starts again on the same disk, takes the upload
 *   up again with its uploader, lists every object, and a full build (repair) then succeeds.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { mountSmallDisk, SMALL_DISK_REFUSED, type SmallDisk } from '@catalogue/local-aws/small-disk';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { s3Client } from '../../aws/sdk.js';
import { main as catalogueCli, EXIT } from '../../builder/cli.js';
import { generateSnapshot, writeSnapshot } from '../../builder/synthetic/generate.js';
import { packSnapshot } from '../../builder/upload-pack.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { removeTemporaryDirectories, temporaryDirectory } from '../helpers/builder.js';
import { get, PARTNER, publishedFixtureIn, type Started, startNpm, stop } from '../helpers/npm-start.js';
import { signedRequest } from '../helpers/signed.js';

const FIXTURE = join(import.meta.dirname, '../../fixtures/catalogue');
const UPLOAD = 'incoming/fills-the-disk.tar.gz';
const REPORT = 'reports/fills-the-disk.json';

/** Wait for `check` to give a value, at most `ms`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (performance.now() > end) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function readReport(client: S3Client): Promise<Record<string, unknown> | undefined> {
  const read = await client.send(new GetObjectCommand({ Bucket: 'catalogue', Key: REPORT }));
  return JSON.parse(await read.Body!.transformToString()) as Record<string, unknown>;
}

/** The API and the admin API answer: a page of modules, and a key issued and listed. */
async function answering(started: Started, owner: string) {
  const admin = {
    url: started.exports.CATALOGUE_ADMIN_URL!,
    region: started.exports.CATALOGUE_ADMIN_REGION!,
    credentials: {
      accessKeyId: started.exports.CATALOGUE_ADMIN_ACCESS_KEY_ID!,
      secretAccessKey: started.exports.CATALOGUE_ADMIN_SECRET_ACCESS_KEY!,
    },
  };
  const modules = await get(`${started.base}/modules?limit=2`, PARTNER);
  const issued = await signedRequest(admin, 'POST', '/keys', { body: { owner, tier: 'free' } });
  const listed = await signedRequest(admin, 'GET', `/keys?owner=${owner}`);
  return [modules.status, issued.status, listed.status];
}

const reason = SMALL_DISK_REFUSED === undefined ? '' : ` (skipped: ${SMALL_DISK_REFUSED})`;

describe.skipIf(SMALL_DISK_REFUSED !== undefined)(`npm start on a 40 MiB disk${reason}`, () => {
  let disk: SmallDisk | undefined;
  let started: Started | undefined;
  afterAll(async () => {
    if (started?.child.exitCode === null) await stop(started);
    disk?.unmount();
    removeTemporaryDirectories();
  });

  it('an upload that fills it fails with a report saying so; killed and started again, it serves, lists and builds in full', async () => {
    disk = mountSmallDisk(40);
    const local = join(disk.path, 'local');
    const source = temporaryDirectory('fills-the-disk');
    await writeSnapshot(source, generateSnapshot({ modules: 1500, seed: 1 }));
    const archive = await packSnapshot(source);

    // 1. The upload's build, killed with SIGKILL as soon as it writes objects (before any report); npm start on
    // the disk serving the fixture, published there.
    started = await startNpm(await publishedFixtureIn(local));
    let client = s3Client({ endpoint: started.s3Endpoint });
    const objects = join(local, 's3', 'catalogue', 'o');
    const before = readdirSync(objects).length;
    await client.send(new PutObjectCommand({ Bucket: 'catalogue', Key: UPLOAD, Body: archive }));
    // About 100 of its objects written (the disk is full at about 1,800).
    await until(
      'the build writing',
      async () => (readdirSync(objects).length > before + 300 ? true : undefined),
      60_000,
    );
    const killed = new Promise((resolve) => started!.child.once('exit', resolve));
    started.child.kill('SIGKILL');
    await killed;
    client.destroy();
    // Killed before its report: what names the uploader after the restart is what npm start kept at upload.
    expect(existsSync(join(local, 's3', 'catalogue', `${REPORT}._S3rver_object`))).toBe(false);

    // 2. Started again on the same (nearly full) disk: the upload is taken up again and fails cleanly, its
    // three attempts (at start, 5 s and 20 s later) all on the full disk.
    started = await startNpm(local);
    client = s3Client({ endpoint: started.s3Endpoint });
    try {
      const attempts = () =>
        started!.output().match(/upload incoming\/fills-the-disk\.tar\.gz: publishing failed/g)?.length ?? 0;
      await until('the third attempt', async () => (attempts() >= 3 ? true : undefined), 240_000);
      const report = await readReport(client);
      expect(report).toMatchObject({
        outcome: 'failed',
        uploaded_by: 'AWS:S3RVER',
        error: expect.stringContaining("InsufficientStorage 507) (The local S3's disk is nearly full"),
      });
      expect(started.output()).not.toContain('npm start failed');
      expect(await answering(started, 'disk-owner')).toEqual([200, 201, 200]);
      // Every object of the bucket is listed (no half-written one breaks the listing).
      let listed = 0;
      for await (const _ of new S3ObjectStore({ client, bucket: 'catalogue' }).list('')) listed++;
      expect(listed).toBeGreaterThan(891);

      // 3. A full build (repair lists the whole target) succeeds, and collects what the failed builds left.
      const quiet = [
        vi.spyOn(process.stdout, 'write').mockImplementation(() => true),
        vi.spyOn(process.stderr, 'write').mockImplementation(() => true),
      ];
      const code = await catalogueCli([
        'repair',
        '--source',
        FIXTURE,
        '--out',
        's3://catalogue',
        '--endpoint',
        started.s3Endpoint,
      ]).finally(() => {
        for (const spy of quiet) spy.mockRestore();
      });
      expect(code).toBe(EXIT.ok);
      expect(await answering(started, 'disk-owner-2')).toEqual([200, 201, 200]);
    } finally {
      client.destroy();
    }
  }, 420_000);
});
