/**
 * What an interrupted publish leaves (builder/publish/leftovers.ts) is collected by the next ordinary
 * publish, without listing the target's objects: the objects it journaled before uploading them, when no
 * retained version needs them; and a directory's temporary files of writers that are gone.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeManifest } from '../../../builder/publish/manifest.js';
import { publishCatalogue } from '../../../builder/publish/publish.js';
import type { Snapshot } from '../../../builder/snapshot/snapshot.js';
import { DependencyError } from '../../../store/errors.js';
import { DirectoryObjectStore } from '../../../store/objects/directory.js';
import type {
  ConditionalPutOutcome,
  GetOptions,
  GetOutcome,
  WritableObjectStore,
  WriteCondition,
} from '../../../store/objects/interface.js';
import { MemoryObjectStore } from '../../../store/objects/memory.js';
import { removeTemporaryDirectories, smallSnapshot, temporaryDirectory } from '../../helpers/builder.js';

afterAll(removeTemporaryDirectories);

/** A store that records what is listed, and fails every object upload after the first `uploads` (a full disk). */
class FillingStore implements WritableObjectStore {
  readonly listed: string[] = [];
  #uploads = 0;
  constructor(
    readonly inner: WritableObjectStore,
    readonly uploads = Number.POSITIVE_INFINITY,
  ) {}
  get(key: string, options?: GetOptions): Promise<GetOutcome> {
    return this.inner.get(key, options);
  }
  async put(key: string, body: Uint8Array): Promise<void> {
    if (key.includes('/o/') || key.startsWith('o/')) {
      if (this.#uploads++ >= this.uploads) throw new DependencyError('objects', `put ${key} failed: ENOSPC`);
    }
    return this.inner.put(key, body);
  }
  putIf(key: string, body: Uint8Array, condition: WriteCondition): Promise<ConditionalPutOutcome> {
    return this.inner.putIf(key, body, condition);
  }
  list(prefix: string) {
    this.listed.push(prefix);
    return this.inner.list(prefix);
  }
  delete(keys: readonly string[]): Promise<void> {
    return this.inner.delete(keys);
  }
}

/** The snapshot with `n` modules renamed: a small edit, built incrementally. */
function edited(snapshot: Snapshot, n: number, tag: string): Snapshot {
  return {
    ...snapshot,
    modules: snapshot.modules.map((m, i) => (i < n ? { ...m, name: `${m.name} ${tag}` } : m)),
  };
}

async function objectIds(store: WritableObjectStore): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const { key } of store.list('o/')) ids.add(key.slice(2));
  return ids;
}

async function referenced(store: WritableObjectStore): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const { key } of store.list('versions/')) {
    const match = /^versions\/(.{22})\.manifest$/.exec(key);
    if (!match) continue;
    const read = await store.get(key);
    for (const id of decodeManifest(read.ok ? read.body : undefined, match[1]!)!.objects.keys()) ids.add(id);
  }
  return ids;
}

describe('leftovers of an interrupted publish', () => {
  it('objects a failed publish uploaded are collected by the next incremental publish, which lists no object', async () => {
    const memory = new MemoryObjectStore();
    const base = smallSnapshot(40);
    await publishCatalogue({ store: memory, snapshot: base });
    const before = await objectIds(memory);

    // The disk fills up after 5 uploads of an edit of many modules.
    const full = new FillingStore(memory, 5);
    await expect(publishCatalogue({ store: full, snapshot: edited(base, 30, 'x') })).rejects.toThrow(
      /ENOSPC/,
    );
    const orphans = [...(await objectIds(memory))].filter((id) => !before.has(id));
    expect(orphans.length).toBe(5);

    // Then a small edit, published the ordinary way.
    const next = new FillingStore(memory);
    const summary = await publishCatalogue({ store: next, snapshot: edited(base, 1, 'y') });
    expect(summary.mode).toBe('incremental');
    expect(next.listed).toEqual(['versions/']);
    expect(summary.leftovers?.objects).toBeGreaterThanOrEqual(orphans.length);
    const left = await objectIds(memory);
    for (const id of orphans) expect(left.has(id), id).toBe(false);
    expect(left).toEqual(await referenced(memory));
    // And the journal is gone.
    const journals: string[] = [];
    for await (const { key } of memory.list('versions/pending-')) journals.push(key);
    expect(journals).toEqual([]);
  });

  it('a re-run of the failed publish keeps what it had uploaded, and uploads only the rest', async () => {
    const memory = new MemoryObjectStore();
    const base = smallSnapshot(40);
    await publishCatalogue({ store: memory, snapshot: base });
    const target = edited(base, 30, 'x');
    await expect(
      publishCatalogue({ store: new FillingStore(memory, 5), snapshot: target }),
    ).rejects.toThrow();
    const complete = await publishCatalogue({ store: new MemoryObjectStore(), snapshot: target });
    const rerun = await publishCatalogue({ store: memory, snapshot: target });
    expect(rerun.version).toBe(complete.version);
    expect(rerun.objects.unchanged).toBeGreaterThanOrEqual(5);
    expect(await objectIds(memory)).toEqual(await referenced(memory));
  });

  it("a directory's temporary files of writers that are gone go with the next publish", async () => {
    const root = temporaryDirectory('leftovers');
    const store = new DirectoryObjectStore(root);
    const base = smallSnapshot(20);
    await publishCatalogue({ store, snapshot: base });
    const host = hostname()
      .replace(/[^A-Za-z0-9-]/g, '')
      .slice(0, 32);
    writeFileSync(join(root, '.tmp-writes', `${host}.${2 ** 30}.7`), 'partial');
    const summary = await publishCatalogue({ store, snapshot: edited(base, 1, 'z') });
    expect(summary.leftovers?.temporaryFiles).toBe(1);
    expect(readdirSync(join(root, '.tmp-writes'))).toEqual([]);
  });
});
