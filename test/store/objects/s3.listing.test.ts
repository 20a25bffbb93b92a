/**
 * Listings past one page through the S3 object store against the embedded s3rver: S3 pages by 1,000 keys, so
 * every publish and every `npm start` over more than 1,000 objects depends on continuation tokens working.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { type LocalServer, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Client } from '../../../aws/sdk.js';
import { S3ObjectStore } from '../../../store/objects/s3.js';

const KEYS = 2_345;

let s3: (LocalServer & { bucket: string }) | undefined;
let client: S3Client | undefined;

beforeAll(async () => {
  s3 = await startS3('listing-test');
  client = s3Client({ endpoint: s3.endpoint });
});

afterAll(async () => {
  client?.destroy();
  await s3?.dispose();
});

async function putAll(store: S3ObjectStore, keys: readonly string[], inFlight = 32): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      await store.put(key, Buffer.from(key));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

describe('S3ObjectStore.list on s3rver', () => {
  it(`returns each of ${KEYS.toLocaleString('en')} keys exactly once, across continuation tokens`, async () => {
    const store = new S3ObjectStore({ client: client!, bucket: s3!.bucket });
    // Keys whose order differs from insertion order, and neighbours outside the prefix on both sides.
    const keys = Array.from(
      { length: KEYS },
      (_, i) => `o/${((i * 7919) % KEYS).toString(36).padStart(3, '0')}-${i}`,
    );
    await putAll(store, [...keys, 'a-before', 'p-after', 'o']);

    const listed: { key: string; size: number }[] = [];
    for await (const object of store.list('o/')) listed.push(object);

    expect(listed).toHaveLength(KEYS);
    expect(new Set(listed.map(({ key }) => key))).toEqual(new Set(keys));
    for (const { key, size } of listed) expect(size).toBe(Buffer.byteLength(key));
  }, 120_000);
});
