/**
 * Incremental publishing (docs/design.md#what-the-builder-guarantees, 7): a small edit is built from the previous version's
 * manifest, writes only the objects and shards it changes, lists nothing — and gives exactly the bytes of a
 * full build of the same snapshot.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { HISTORY_FILE } from '../../../builder/publish/history.js';
import { decodeManifest, encodeManifest, manifestKey } from '../../../builder/publish/manifest.js';
import { publishCatalogue } from '../../../builder/publish/publish.js';
import { renderCatalogue } from '../../../builder/render/full.js';
import type { Snapshot } from '../../../builder/snapshot/snapshot.js';
import { objectIdFor, POINTER_KEY } from '../../../store/layout.js';
import { DirectoryObjectStore } from '../../../store/objects/directory.js';
import type { ListedObject } from '../../../store/objects/interface.js';
import {
  copiedDirectory,
  fixtureSnapshot,
  removeTemporaryDirectories,
  smallSnapshot,
  temporaryDirectory,
  versionOn,
} from '../../helpers/builder.js';

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

/** A directory store that counts listings: an incremental publish must not list the target's objects. */
class CountingStore extends DirectoryObjectStore {
  objectListings = 0;
  override list(prefix: string): AsyncIterable<ListedObject> {
    if (prefix.endsWith('o/')) this.objectListings++;
    return super.list(prefix);
  }
}

async function publish(root: string, snapshot: Snapshot, when: number, extra = {}) {
  const store = new CountingStore(root);
  const summary = await publishCatalogue({ store, snapshot, now: at(when), explain: true, ...extra });
  return { ...summary, objectListings: store.objectListings };
}

/** A full publish of `snapshot` into an empty target: the reference every incremental publish must match. */
async function cold(snapshot: Snapshot, extra = {}): Promise<{ root: string; files: Map<string, Buffer> }> {
  const root = temporaryDirectory('cold');
  await publish(root, snapshot, T0 + HOUR, extra);
  return { root, files: files(root) };
}

/** A promise made once, on first use: a publish the tests only read, done once per file. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    return made;
  };
}

/** A rendered (pure, the same every time): its pointer and objects. */
let renderedA: ReturnType<typeof renderCatalogue> | undefined;
const rendered = () => {
  renderedA ??= renderCatalogue(snapshotA());
  return renderedA;
};
/** The object ids of A's version. */
const objectsOfA = () => rendered().objects.keys();

/** The full build of B the fixture tests compare with (read only). */
const coldB = once(() => cold(snapshotB()));
/** A published at T0 into a target of its own, kept as a template (never written to again). */
const publishedA = once(async () => {
  const root = temporaryDirectory('template-a');
  return { root, first: await publish(root, snapshotA(), T0) };
});

/** A target holding exactly A's first publish (a copy of the template) and that publish's summary. */
async function targetWithA(label: string) {
  const { root, first } = await publishedA();
  return { root: copiedDirectory(root, label), first };
}

/**
 * The target after A then B holds exactly what a full publish of B writes (objects, shards, version file,
 * manifest, pointer: same bytes), plus A's objects and files kept for the retention period; every object is
 * intact.
 */
function expectSameAsCold(root: string, reference: Map<string, Buffer>, aObjects: Iterable<string>) {
  const got = files(root);
  for (const [path, bytes] of reference) {
    if (path === HISTORY_FILE) continue; // the log of A then B differs from B's alone, by design
    expect(got.get(path)?.equals(bytes), path).toBe(true);
  }
  const objects = [...got.keys()].filter((path) => path.startsWith('o/')).map((path) => path.slice(2));
  const expected = new Set([...aObjects, ...versionOn(root).objectIds]);
  expect(new Set(objects)).toEqual(expected);
  for (const id of objects) expect(objectIdFor(got.get(`o/${id}`)!), id).toBe(id);
}

describe('an incremental publish', () => {
  it('writes only changed objects and shards, lists nothing, and gives the bytes of a full build', async () => {
    const reference = await coldB();
    const { root, first } = await targetWithA('incremental');
    const second = await publish(root, snapshotB(), T0 + HOUR);

    expect(first.mode).toBe('full');
    expect(second.mode).toBe('incremental');
    expect(second.objectListings).toBe(0);
    expectSameAsCold(root, reference.files, objectsOfA());
    expect(second.version).toBe(versionOn(reference.root).version);
    expect(second.previousVersion).toBe(first.version);
    const before = versionOn(root, rendered().pointerBytes).objectIds;
    const fresh = [...versionOn(root).objectIds].filter((id) => !before.has(id));
    expect(fresh.length).toBeGreaterThan(0);
    expect(second.objects).toMatchObject({ added: fresh.length, total: versionOn(root).objectIds.size });
    expect(new Set(second.uploads!.map((upload) => upload.objectId))).toEqual(new Set(fresh));
    // Unchanged shards keep their names; only those holding a changed key are new.
    const shardsA = versionOn(root, rendered().pointerBytes).pointer.shards;
    const shardsB = versionOn(root).pointer.shards;
    const rewritten = shardsB.filter((id, slot) => id !== shardsA[slot]);
    expect(rewritten.length).toBeGreaterThan(0);
    expect(rewritten.length).toBeLessThanOrEqual(shardsB.length);
    // Every reported change is real: the key's entry differs between A's and B's index.
    const entriesA = versionOn(root, rendered().pointerBytes).entries;
    const entriesB = versionOn(root).entries;
    for (const change of second.changes!) {
      expect(change.before).toEqual(entriesA.get(change.indexKey));
      expect(change.after).toEqual(entriesB.get(change.indexKey));
    }
    const changedKeys = new Set(second.changes!.map((change) => change.indexKey));
    for (const key of new Set([...entriesA.keys(), ...entriesB.keys()])) {
      if (JSON.stringify(entriesA.get(key)) !== JSON.stringify(entriesB.get(key))) {
        expect(changedKeys.has(key), key).toBe(true);
      }
    }
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
  ])('%s manifest means a full build with identical results', async (_, damage) => {
    const reference = await coldB();
    const { root, first } = await targetWithA('damaged');
    damage(join(root, manifestKey('', first.version)));

    const second = await publish(root, snapshotB(), T0 + HOUR);

    expect(second.mode).toBe('full');
    expect(second.fullBuildReason).toMatch(/manifest/);
    expectSameAsCold(root, reference.files, objectsOfA());
    expect(second.version).toBe(versionOn(reference.root).version);
  });

  it('an edit of many modules is a full build, with identical results', async () => {
    const many = snapshotA();
    for (const module of many.modules.slice(0, 100)) module.description = `Edited ${module.id}`;
    const reference = await cold(many);
    const { root } = await targetWithA('many');

    const second = await publish(root, many, T0 + HOUR);

    expect(second.mode).toBe('full');
    expect(second.fullBuildReason).toBe('100 modules changed');
    expectSameAsCold(root, reference.files, objectsOfA());
  });

  it('objects missing from a damaged target are uploaded again by repair, and orphans are collected', async () => {
    const reference = await coldB();
    const { root } = await targetWithA('lost-object');
    await publish(root, snapshotB(), T0 + HOUR);
    const needed = [...versionOn(root).objectIds];
    for (const id of needed.slice(0, 10)) rmSync(join(root, 'o', id));
    writeFileSync(join(root, 'o', 'Z'.repeat(22)), 'an orphan of an abandoned publish');

    const repaired = await publish(root, snapshotB(), T0 + 2 * HOUR, { repair: true });

    expect(repaired.mode).toBe('repair');
    expect(repaired.objects.added).toBe(10);
    expect(repaired.objects.removed).toBe(1);
    expectSameAsCold(root, reference.files, objectsOfA());
  });

  it('re-publishing the same snapshot rewrites no file', async () => {
    const { root } = await targetWithA('same');
    const mtimes = () =>
      [...files(root).keys()].map((path) => `${path}:${statSync(join(root, path)).mtimeMs}`).sort();
    const before = mtimes();

    const again = await publish(root, snapshotA(), T0 + HOUR);

    expect(again).toMatchObject({ mode: 'incremental', objectListings: 0, changes: [] });
    expect(again.objects).toMatchObject({ added: 0, removed: 0 });
    expect(mtimes()).toEqual(before);
  });

  it('a manifest of another version, or foreign bytes, is refused', async () => {
    const { root, first } = await targetWithA('manifest');
    const bytes = readFileSync(join(root, manifestKey('', first.version)));
    const manifest = decodeManifest(bytes, first.version)!;

    expect(manifest.objects.size).toBe(first.objects.total);
    expect(encodeManifest(manifest).equals(bytes)).toBe(true);
    expect(decodeManifest(bytes, 'A'.repeat(22))).toBeUndefined();
    expect(decodeManifest(Buffer.from('{"not":"a manifest"}'), first.version)).toBeUndefined();
    expect(decodeManifest(undefined, first.version)).toBeUndefined();
    expect(readFileSync(join(root, POINTER_KEY)).byteLength).toBeLessThan(1024);
  });
});

/** One random edit of a small snapshot. */
const edit = fc.oneof(
  fc.record({
    kind: fc.constant('rename' as const),
    at: fc.nat(),
    name: fc.string({ minLength: 1, maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant('hp' as const), at: fc.nat(), hp: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('maker' as const), at: fc.nat(), maker: fc.nat() }),
  fc.record({
    kind: fc.constant('tags' as const),
    at: fc.nat(),
    tags: fc.uniqueArray(fc.nat({ max: 9 }), { maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('add' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('tagName' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('makerName' as const), at: fc.nat() }),
);
type Edit = typeof edit extends fc.Arbitrary<infer T> ? T : never;

function applyEdits(base: Snapshot, edits: readonly Edit[]): Snapshot {
  const snapshot = structuredClone(base);
  const { modules } = snapshot;
  for (const change of edits) {
    if (modules.length === 0) break;
    const module = modules[change.at % modules.length]!;
    if (change.kind === 'rename') module.name = `${change.name.trim() || 'x'} ${module.id}`;
    if (change.kind === 'hp') module.hp = change.hp;
    if (change.kind === 'maker')
      module.manufacturer_id = snapshot.manufacturers[change.maker % snapshot.manufacturers.length]!.id;
    if (change.kind === 'tags')
      module.tag_ids = change.tags.map((i) => snapshot.tags[i % snapshot.tags.length]!.id);
    if (change.kind === 'add') {
      const copy = structuredClone(module);
      copy.id = Math.max(...modules.map((m) => m.id)) + 1;
      modules.push(copy);
    }
    if (change.kind === 'remove') modules.splice(change.at % modules.length, 1);
    if (change.kind === 'makerName') {
      const maker = snapshot.manufacturers[change.at % snapshot.manufacturers.length]!;
      maker.name = `${maker.name}*`;
    }
    if (change.kind === 'tagName') {
      const tag = snapshot.tags[change.at % snapshot.tags.length]!;
      tag.name = `${tag.name}*`;
    }
  }
  for (const module of modules) module.tag_ids = [...new Set(module.tag_ids)];
  return snapshot;
}

describe('incremental equals full, for random edits', () => {
  it.each([
    ['', undefined, 25],
    [
      ', unchanged modules taken over from the current version (builder/publish/reuse.ts)',
      'property-builder',
      15,
    ],
  ])(
    'pointer, shards, objects and manifest are byte-identical to a full build of the edited snapshot%s',
    async (_, builder, numRuns) => {
      const base = smallSnapshot(40);
      const extra = builder ? { builder } : {};
      // The base's publish is the same in every run: done once, each run starting from a copy of it.
      const published = temporaryDirectory('property-base');
      await publish(published, base, T0, extra);
      const baseObjects = [...renderCatalogue(base).objects.keys()];
      await fc.assert(
        fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 4 }), async (edits) => {
          const next = applyEdits(base, edits);
          const reference = await cold(next, extra);
          const root = copiedDirectory(published, 'property');
          const summary = await publish(root, next, T0 + HOUR, extra);
          expect(summary.mode).toBe('incremental');
          expectSameAsCold(root, reference.files, baseObjects);
          // Each edit touches at most one module of the base; a renamed tag is in every module's bytes.
          const tagsRenamed = edits.some((change) => change.kind === 'tagName');
          if (builder && !tagsRenamed) {
            expect(summary.modulesReused).toBeGreaterThanOrEqual(base.modules.length - edits.length);
          } else expect(summary.modulesReused).toBe(0);
        }),
        { numRuns },
      );
    },
  );
});
