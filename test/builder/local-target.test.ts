/**
 * The target of versions, rollback and unlock (builder/local-target.ts): `--out` as given, or with none this
 * checkout's running npm start's catalogue (its bucket and prefix in its local S3), or a refusal naming both
 * ways on; `--endpoint` without `--out` is a usage error.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordLocalStack } from '../../aws/local-stack.js';
import { chooseTarget, NoTargetError } from '../../builder/local-target.js';

const root = mkdtempSync(join(tmpdir(), 'cat-local-target-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the target of versions, rollback and unlock', () => {
  it('is --out (and --endpoint) when given, npm start or not', async () => {
    expect(await chooseTarget('s3://b/p', 'http://127.0.0.1:1', { env: {}, root }, 'versions')).toEqual({
      out: 's3://b/p',
      endpoint: 'http://127.0.0.1:1',
    });
    expect(await chooseTarget('./public', undefined, { env: {}, root }, 'versions')).toEqual({
      out: './public',
      endpoint: undefined,
    });
  });

  it('refuses --endpoint without --out', async () => {
    await expect(
      chooseTarget(undefined, 'http://127.0.0.1:1', { env: {}, root }, 'rollback'),
    ).rejects.toThrow(RangeError);
  });

  it('without --out and no npm start running: says so, and how to name a target', async () => {
    const none = join(root, 'none');
    await expect(
      chooseTarget(undefined, undefined, { env: { CATALOGUE_LOCAL_DIR: none }, root }, 'unlock'),
    ).rejects.toThrow(
      new NoTargetError(
        `unlock: no npm start is running on ${none} (none has recorded one there): start it (npm start) in another shell, or name the target with --out DIR or --out s3://BUCKET/PREFIX (and --endpoint URL)`,
      ),
    );
  });

  it('without --out: the catalogue of the running npm start, its prefix included', async () => {
    const s3 = createServer((socket) => socket.on('error', () => {}));
    await new Promise<void>((ready) => s3.listen(0, '127.0.0.1', ready));
    const endpoint = `http://127.0.0.1:${(s3.address() as { port: number }).port}`;
    const data = join(root, 'running');
    mkdirSync(data);
    try {
      recordLocalStack(data, {
        pid: process.pid,
        s3: endpoint,
        bucket: 'catalogue',
        prefix: 'v1/',
        dynamodb: endpoint,
        keysTable: 'k',
        countersTable: 'c',
        api: 'http://127.0.0.1:8787/v1',
      });

      const chosen = await chooseTarget(
        undefined,
        undefined,
        { env: { CATALOGUE_LOCAL_DIR: data }, root },
        'x',
      );

      expect(chosen).toEqual({
        out: 's3://catalogue/v1',
        endpoint,
        local: `no --out: this checkout's npm start, s3://catalogue/v1 in its local S3 at ${endpoint} (data directory ${data})`,
      });
    } finally {
      s3.close();
    }
  });
});
