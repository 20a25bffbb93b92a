/**
 * Where an upload goes (builder/upload-destination.ts): `--out` names the stack's bucket (as `s3://BUCKET` or as
 * its UploadUri output), nothing else; with no `--out`, the npm start of the data directory, found from the
 * endpoints it records, in the bucket it serves from.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordEndpoint } from '../../aws/local-stack.js';
import { DestinationError, openDestination, uploadBucket } from '../../builder/upload-destination.js';

const root = mkdtempSync(join(tmpdir(), 'cat-destination-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('--out', () => {
  it.each([
    ['s3://catalogue-bucket', 'catalogue-bucket'],
    ['s3://catalogue-bucket/', 'catalogue-bucket'],
    ['s3://catalogue-bucket/incoming/', 'catalogue-bucket'],
    ['s3://catalogue-bucket/incoming', 'catalogue-bucket'],
  ])('%s → the bucket %s', (out, bucket) => {
    expect(uploadBucket(out)).toBe(bucket);
  });

  it.each(['s3://catalogue-bucket/catalogue', 's3://catalogue-bucket/incoming/x', './public', 's3://A_B'])(
    '%s is refused, saying what upload takes',
    (out) => {
      expect(() => uploadBucket(out)).toThrow(
        `--out ${out}: upload takes the stack's bucket, s3://BUCKET (or its UploadUri, s3://BUCKET/incoming/); ` +
          "the snapshot goes to incoming/ and the stack's builder publishes it",
      );
    },
  );
});

describe('no --out: the npm start of the data directory', () => {
  it('is found from the endpoints it records, in the bucket it serves from', async () => {
    mkdirSync(join(root, '.local'));
    recordEndpoint(join(root, '.local'), 's3', 'http://127.0.0.1:40123');
    const destination = await openDestination({ env: {}, root });
    destination.close();
    expect(destination).toMatchObject({
      bucket: 'catalogue',
      endpoint: 'http://127.0.0.1:40123',
      local: true,
      description: `s3://catalogue (npm start's local S3 at http://127.0.0.1:40123, data directory ${join(root, '.local')})`,
    });

    const other = await openDestination({
      env: { CATALOGUE_LOCAL_DIR: join(root, '.local'), CATALOGUE_BUCKET: 'mine' },
      root: '/elsewhere',
    });
    other.close();
    expect(other).toMatchObject({ bucket: 'mine', endpoint: 'http://127.0.0.1:40123' });
  });

  it('none has run there: said in one line', async () => {
    await expect(openDestination({ env: { CATALOGUE_LOCAL_DIR: join(root, 'none') }, root })).rejects.toThrow(
      new DestinationError(
        `no npm start has run on ${join(root, 'none')} (it records its local S3 there): start one (npm start) in another shell, or name the stack’s bucket with --out s3://BUCKET`,
      ),
    );
  });
});
