import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { type LocalServer, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Client } from '../../../aws/sdk.js';
import { DependencyError } from '../../../store/errors.js';
import { DirectoryObjectStore } from '../../../store/objects/directory.js';
import type { WritableObjectStore } from '../../../store/objects/interface.js';
import { MemoryObjectStore } from '../../../store/objects/memory.js';
import { S3ObjectStore } from '../../../store/objects/s3.js';

const directories: string[] = [];
let s3: (LocalServer & { bucket: string }) | undefined;
let client: S3Client | undefined;

beforeAll(async () => {
  s3 = await startS3('stores-test');
  client = s3Client({ endpoint: s3.endpoint });
});

afterAll(async () => {
  client?.destroy();
  await s3?.dispose();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

const factories: [string, () => WritableObjectStore][] = [
  ['memory', () => new MemoryObjectStore()],
  [
    'directory',
    () => {
      const root = mkdtempSync(join(tmpdir(), 'cat-store-'));
      directories.push(root);
      return new DirectoryObjectStore(root);
    },
  ],
  // A fresh prefix per store keeps the suites independent inside one bucket.
  [
    's3',
    () => new PrefixedStore(new S3ObjectStore({ client: client!, bucket: s3!.bucket }), `t${counter++}/`),
  ],
];
let counter = 0;

/** Runs the shared suite on S3 under its own prefix, so every case starts from an empty store. */
class PrefixedStore implements WritableObjectStore {
  constructor(
    private readonly inner: WritableObjectStore,
    private readonly prefix: string,
  ) {}
  get: WritableObjectStore['get'] = (key, options) => this.inner.get(this.prefix + key, options);
  put: WritableObjectStore['put'] = (key, body, options) => this.inner.put(this.prefix + key, body, options);
  putIf: WritableObjectStore['putIf'] = (key, body, condition, options) =>
    this.inner.putIf(this.prefix + key, body, condition, options);
  delete: WritableObjectStore['delete'] = (keys, options) =>
    this.inner.delete(
      keys.map((key) => this.prefix + key),
      options,
    );
  async *list(prefix: string) {
    for await (const object of this.inner.list(this.prefix + prefix)) {
      yield { key: object.key.slice(this.prefix.length), size: object.size };
    }
  }
}

async function keysOf(store: WritableObjectStore, prefix: string): Promise<[string, number][]> {
  const listed: [string, number][] = [];
  for await (const { key, size } of store.list(prefix)) listed.push([key, size]);
  return listed.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

describe.each(factories)('%s object store', (_name, create) => {
  it('reads back what was put, whole and by range', async () => {
    const store = create();
    await store.put('o/abc', Buffer.from('hello world'));

    const whole = await store.get('o/abc');
    const part = await store.get('o/abc', { range: [6, 11] });
    const clamped = await store.get('o/abc', { range: [6, 500] });

    expect(whole.ok && whole.body.toString()).toBe('hello world');
    expect(part.ok && part.body.toString()).toBe('world');
    expect(clamped.ok && clamped.body.toString()).toBe('world');
  });

  it('answers not-found for a missing key and not-modified for a matching ETag', async () => {
    const store = create();
    await store.put('current.json', Buffer.from('{"v":1}'));
    const first = await store.get('current.json');
    const etag = first.ok ? first.etag : 'none';

    expect(await store.get('missing.json')).toEqual({ ok: false, reason: 'not-found' });
    expect(await store.get('current.json', { ifNoneMatch: etag })).toEqual({
      ok: false,
      reason: 'not-modified',
    });
    await store.put('current.json', Buffer.from('{"v":22}'));
    const changed = await store.get('current.json', { ifNoneMatch: etag });
    expect(changed.ok && changed.body.toString()).toBe('{"v":22}');
    expect(changed.ok && changed.etag).not.toBe(etag);
  });

  it('refuses a range past the end as an origin fault', async () => {
    const store = create();
    await store.put('o/short', Buffer.from('abc'));
    await expect(store.get('o/short', { range: [3, 10] })).rejects.toBeInstanceOf(DependencyError);
    await expect(store.get('o/short', { range: [2, 2] })).rejects.toBeInstanceOf(RangeError);
  });

  it('lists by prefix recursively and deletes, ignoring missing keys', async () => {
    const store = create();
    await store.put('o/a', Buffer.from('1'));
    await store.put('o/b', Buffer.from('22'));
    await store.put('versions/v.json', Buffer.from('333'));
    await store.put('current.json', Buffer.from('4444'));

    expect(await keysOf(store, 'o/')).toEqual([
      ['o/a', 1],
      ['o/b', 2],
    ]);
    expect(await keysOf(store, '')).toHaveLength(4);
    expect(await keysOf(store, 'versions/v')).toEqual([['versions/v.json', 3]]);
    await store.delete(['o/a', 'o/never']);
    expect(await keysOf(store, 'o/')).toEqual([['o/b', 2]]);
  });

  it('writes conditionally as S3 does: create only if absent, replace only the version read', async () => {
    const store = create();
    const created = await store.putIf('publish.lock', Buffer.from('a'), { ifNoneMatch: '*' });
    expect(created).toMatchObject({ ok: true, etag: expect.any(String) });
    const etag = created.ok ? created.etag : '';
    const read = await store.get('publish.lock');
    expect(read.ok && read.etag).toBe(etag);
    expect(await store.putIf('publish.lock', Buffer.from('b'), { ifNoneMatch: '*' })).toEqual({
      ok: false,
      reason: 'precondition-failed',
    });
    const replaced = await store.putIf('publish.lock', Buffer.from('bb'), { ifMatch: etag });
    expect(replaced).toMatchObject({ ok: true });
    expect(await store.putIf('publish.lock', Buffer.from('c'), { ifMatch: etag })).toEqual({
      ok: false,
      reason: 'precondition-failed',
    });
    expect(await store.putIf('absent.json', Buffer.from('c'), { ifMatch: etag })).toEqual({
      ok: false,
      reason: 'precondition-failed',
    });
    const now = await store.get('publish.lock');
    expect(now.ok && now.body.toString()).toBe('bb');
    expect(now.ok && now.etag).toBe(replaced.ok ? replaced.etag : '');
  });

  it('of concurrent conditional writers with the same condition exactly one wins', async () => {
    const store = create();
    const creators = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.putIf('race.json', Buffer.from(`c${i}`), { ifNoneMatch: '*' }),
      ),
    );
    expect(creators.filter((outcome) => outcome.ok)).toHaveLength(1);
    const winner = creators.find((outcome) => outcome.ok)!;
    const replacers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.putIf('race.json', Buffer.from(`r${i}`), { ifMatch: winner.ok ? winner.etag : '' }),
      ),
    );
    expect(replacers.filter((outcome) => outcome.ok)).toHaveLength(1);
  });

  it('fails with a DependencyError when aborted', async () => {
    const store = create();
    await store.put('o/a', Buffer.from('1'));
    const aborted = AbortSignal.abort();
    if (store instanceof MemoryObjectStore) return; // memory has nothing to abort
    await expect(store.get('o/a', { signal: aborted })).rejects.toBeInstanceOf(DependencyError);
  });
});

describe('directory object store', () => {
  it('never exposes a temporary file of an interrupted write', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cat-store-'));
    directories.push(root);
    const store = new DirectoryObjectStore(root);
    await store.put('o/a', Buffer.from('1'));
    writeFileSync(join(root, 'o', '.tmp-b-123456'), 'partial');

    expect(await keysOf(store, 'o/')).toEqual([['o/a', 1]]);
    expect(readdirSync(join(root, 'o'))).toHaveLength(2);
  });

  it('collects the temporary files of writers that are gone, and keeps those of live ones', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cat-store-'));
    directories.push(root);
    const store = new DirectoryObjectStore(root);
    await store.put('o/a', Buffer.from('1'));
    // A process that is surely gone (beyond any pid), this process (alive), and an earlier release's file.
    const temporary = join(root, '.tmp-writes');
    const me = hostname()
      .replace(/[^A-Za-z0-9-]/g, '')
      .slice(0, 32);
    writeFileSync(join(temporary, `${me}.99999999.1`), 'left by a killed publish');
    writeFileSync(join(temporary, `${me}.${process.pid}.1`), 'in flight');
    writeFileSync(join(root, '.tmp-current.json-99999999-3'), 'left by an earlier release');
    writeFileSync(join(root, 'o', '.tmp-b-99999999-4'), 'deep');

    expect(await store.collectTemporary()).toBe(2);
    expect(readdirSync(temporary)).toEqual([`${me}.${process.pid}.1`]);
    expect(readdirSync(join(root, 'o')).sort()).toEqual(['.tmp-b-99999999-4', 'a']);
    expect(await store.collectTemporary({ deep: true })).toBe(1);
    expect(readdirSync(join(root, 'o'))).toEqual(['a']);
  });

  it('refuses keys that would leave its root', () => {
    const store = new DirectoryObjectStore('/tmp/nowhere');
    expect(() => store.pathOf('../etc/passwd')).toThrow(RangeError);
    expect(() => store.pathOf('/abs')).toThrow(RangeError);
  });

  it('answers not-found on a missing root', async () => {
    const store = new DirectoryObjectStore(join(tmpdir(), 'cat-no-such-root'));
    expect(await store.get('current.json')).toEqual({ ok: false, reason: 'not-found' });
    expect(await keysOf(store, 'o/')).toEqual([]);
  });
});
