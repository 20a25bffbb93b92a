import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeCache, encodeCache } from '../../builder/cache.js';
import { HISTORY_FILE } from '../../builder/history.js';
import { objectIdsOf, publishCatalogue } from '../../builder/publish.js';
import { planCatalogue, renderCatalogue } from '../../builder/render.js';
import type { Snapshot } from '../../builder/snapshot.js';
import { type CatalogueIndex, objectIdFor, POINTER_KEY } from '../../proxy/format.js';
import { DirectoryObjectStore } from '../../proxy/objects/directory.js';
import { fixtureSnapshot, removeTemporaryDirectories, temporaryDirectory } from './helpers.js';

const T0 = Date.parse('2026-01-05T10:00:00Z');
const HOUR = 3_600_000;
const at = (ms: number) => () => new Date(ms);

afterAll(() => removeTemporaryDirectories());

/** A: the fixture. B: one module renamed, one added, one removed, a tag renamed. */
const snapshotA = (): Snapshot => fixtureSnapshot();
function snapshotB(): Snapshot {
  const snapshot = fixtureSnapshot();
  snapshot.modules[7]!.name = `${snapshot.modules[7]!.name} Mk2`;
  const added = structuredClone(snapshot.modules[3]!);
  added.id = Math.max(...snapshot.modules.map((m) => m.id)) + 1;
  added.name = 'Brand New Module';
  snapshot.modules.push(added);
  snapshot.modules.splice(20, 1);
  snapshot.tags[2]!.name = `${snapshot.tags[2]!.name} (renamed)`;
  return snapshot;
}

/** Every file under `root` (relative path → bytes). */
function files(root: string): Map<string, Buffer> {
  const result = new Map<string, Buffer>();
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else result.set(relative(root, path), readFileSync(path));
    }
  };
  walk(root);
  return result;
}

const pointerOf = (root: string) =>
  JSON.parse(readFileSync(join(root, POINTER_KEY), 'utf8')) as CatalogueIndex;

async function publish(root: string, snapshot: Snapshot, when: number) {
  return publishCatalogue({ store: new DirectoryObjectStore(root), snapshot, now: at(when) });
}

/** A cold publish of B into an empty target: the reference every incremental publish must match. */
async function coldB(): Promise<{ root: string; files: Map<string, Buffer> }> {
  const root = temporaryDirectory('cold-b');
  await publish(root, snapshotB(), T0 + HOUR);
  return { root, files: files(root) };
}

/**
 * The target after A then B holds exactly what a cold publish of B writes (objects, version file, cache,
 * pointer: same bytes), plus A's objects and files kept for the retention period; every object is intact.
 */
function expectSameAsCold(root: string, cold: Map<string, Buffer>) {
  const got = files(root);
  for (const [path, bytes] of cold) {
    if (path === HISTORY_FILE) continue; // the log of A then B differs from B's alone, by design
    expect(got.get(path)?.equals(bytes), path).toBe(true);
  }
  const a = renderCatalogue(snapshotA()).index;
  const b = pointerOf(root);
  const objects = [...got.keys()].filter((path) => path.startsWith('o/')).map((path) => path.slice(2));
  expect(new Set(objects)).toEqual(new Set([...objectIdsOf(a), ...objectIdsOf(b)]));
  for (const id of objects) expect(objectIdFor(got.get(`o/${id}`)!), id).toBe(id);
}

describe('the build cache', () => {
  it('an incremental publish encodes only changed objects and gives the bytes of a cold publish', async () => {
    const cold = await coldB();
    const root = temporaryDirectory('incremental');
    const first = await publish(root, snapshotA(), T0);
    const second = await publish(root, snapshotB(), T0 + HOUR);

    expectSameAsCold(root, cold.files);
    expect(second.version).toBe(pointerOf(cold.root).version);
    expect(second.previousVersion).toBe(first.version);
    const fresh = objectIdsOf(pointerOf(root));
    for (const id of objectIdsOf(renderCatalogue(snapshotA()).index)) fresh.delete(id);
    expect(second.objects).toMatchObject({ added: fresh.size, total: objectIdsOf(pointerOf(root)).size });
    expect(fresh.size).toBeGreaterThan(0);

    // Only the changed objects are encoded: the plan yields exactly the new ones and reuses the rest.
    const cache = decodeCache(readFileSync(join(root, `versions/${first.version}.cache`)), first.version);
    expect(cache?.size).toBeGreaterThan(0);
    const plan = planCatalogue(snapshotB(), { cache, exists: () => true });
    const yielded = [...plan.objects()].map(({ objectId }) => objectId);
    expect(new Set(yielded)).toEqual(fresh);
    expect(plan.reused.objects + yielded.length).toBe(objectIdsOf(plan.index().index).size);
    expect(plan.index().indexBytes.equals(cold.files.get(POINTER_KEY)!)).toBe(true);
    expect(
      encodeCache(second.version, plan.cache()).equals(cold.files.get(`versions/${second.version}.cache`)!),
    ).toBe(true);
  });

  it.each([
    [
      'a corrupted',
      (path: string) =>
        writeFileSync(path, Buffer.from(readFileSync(path).map((b, i) => (i === 60 ? b ^ 1 : b)))),
    ],
    ['a truncated', (path: string) => writeFileSync(path, readFileSync(path).subarray(0, 100))],
    ['a missing', (path: string) => rmSync(path)],
    ['an empty', (path: string) => writeFileSync(path, '')],
  ])('%s cache file means a full build with identical results', async (_, damage) => {
    const cold = await coldB();
    const root = temporaryDirectory('damaged');
    const first = await publish(root, snapshotA(), T0);
    damage(join(root, `versions/${first.version}.cache`));

    const second = await publish(root, snapshotB(), T0 + HOUR);

    expectSameAsCold(root, cold.files);
    expect(second.version).toBe(pointerOf(cold.root).version);
  });

  it('a cached object missing from the target is encoded and uploaded again', async () => {
    const cold = await coldB();
    const root = temporaryDirectory('lost-object');
    await publish(root, snapshotA(), T0);
    // An object B shares with A (the id-ordered module list of manufacturer 1 is likely unchanged).
    const a = objectIdsOf(renderCatalogue(snapshotA()).index);
    const shared = [...objectIdsOf(pointerOf(cold.root))].filter((id) => a.has(id));
    expect(shared.length).toBeGreaterThan(10);
    for (const id of shared.slice(0, 10)) rmSync(join(root, 'o', id));

    const second = await publish(root, snapshotB(), T0 + HOUR);

    expectSameAsCold(root, cold.files);
    expect(second.objects.added).toBe(objectIdsOf(pointerOf(root)).size - (shared.length - 10));
  });

  it('re-publishing the same snapshot rewrites no file, cache included', async () => {
    const root = temporaryDirectory('same');
    await publish(root, snapshotA(), T0);
    const mtimes = () =>
      [...files(root).keys()].map((path) => `${path}:${statSync(join(root, path)).mtimeMs}`).sort();
    const before = mtimes();

    const again = await publish(root, snapshotA(), T0 + HOUR);

    expect(again.objects).toMatchObject({ added: 0, removed: 0 });
    expect(mtimes()).toEqual(before);
  });

  it('a cache of another version, or foreign bytes, is refused', () => {
    const { index } = renderCatalogue(snapshotA());
    const plan = planCatalogue(snapshotA());
    for (const _ of plan.objects());
    const bytes = encodeCache(index.version, plan.cache());

    expect(decodeCache(bytes, index.version)?.size).toBe(plan.cache().size);
    expect(decodeCache(bytes, 'A'.repeat(22))).toBeUndefined();
    expect(decodeCache(Buffer.from('{"not":"a cache"}'), index.version)).toBeUndefined();
    expect(decodeCache(undefined, index.version)).toBeUndefined();
  });
});
