/**
 * Where an upload goes (builder/upload-destination.ts): `--out` names the stack's bucket (as `s3://BUCKET` or as
 * its UploadUri output), nothing else; with no `--out`, the running npm start of the data directory, found from
 * what it records there, in the bucket it serves from.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordLocalStack } from '../../aws/local-stack.js';
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
  it('is found from what it records, in the bucket it serves from', async () => {
    // Its local S3: anything that accepts a connection, for the check that it runs.
    const s3 = createServer((socket) => socket.on('error', () => {}));
    await new Promise<void>((ready) => s3.listen(0, '127.0.0.1', ready));
    const endpoint = `http://127.0.0.1:${(s3.address() as { port: number }).port}`;
    const stack = {
      pid: process.pid,
      s3: endpoint,
      bucket: 'catalogue',
      prefix: '',
      dynamodb: endpoint,
      keysTable: 'k',
      countersTable: 'c',
      api: 'http://127.0.0.1:8787/v1',
    };
    try {
      mkdirSync(join(root, '.local'));
      recordLocalStack(join(root, '.local'), stack);
      const destination = await openDestination({ env: {}, root });
      destination.close();
      expect(destination).toMatchObject({
        bucket: 'catalogue',
        endpoint,
        local: true,
        description: `s3://catalogue (npm start's local S3 at ${endpoint}, data directory ${join(root, '.local')})`,
      });

      mkdirSync(join(root, 'mine'));
      recordLocalStack(join(root, 'mine'), { ...stack, bucket: 'mine' });
      const other = await openDestination({
        env: { CATALOGUE_LOCAL_DIR: join(root, 'mine') },
        root: '/elsewhere',
      });
      other.close();
      expect(other).toMatchObject({ bucket: 'mine', endpoint });
    } finally {
      s3.close();
    }
  });

  it('none runs there: said in one line, with both ways on', async () => {
    await expect(openDestination({ env: { CATALOGUE_LOCAL_DIR: join(root, 'none') }, root })).rejects.toThrow(
      new DestinationError(
        `no npm start is running on ${join(root, 'none')} (none has recorded one there): start it (npm start) in another shell, or name the stack’s bucket with --out s3://BUCKET`,
      ),
    );
  });
});
