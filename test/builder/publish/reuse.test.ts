/**
 * Reuse across publishes (builder/publish/reuse.ts): a module unchanged since the current version, published by the
 * same builder, is neither validated nor serialised again — and the result is the same as if it had been.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { publishSnapshot } from '../../../builder/publish-snapshot.js';
import type { Snapshot } from '../../../builder/snapshot/snapshot.js';
import { DirectoryObjectStore } from '../../../store/objects/directory.js';
import {
  fixtureSnapshot,
  removeTemporaryDirectories,
  temporaryDirectory,
  writeSnapshotFiles,
} from '../../helpers/builder.js';

afterAll(() => removeTemporaryDirectories());

const BUILDER = 'test-builder/v1';

/** Publish the snapshot files in `source` as the CLI does (load, validating less, then publish). */
async function publishAsCli(root: string, source: string, builder = BUILDER) {
  const outcome = await publishSnapshot(
    source,
    { store: new DirectoryObjectStore(root), prefix: '' },
    { builder },
  );
  if (outcome.ok)
    return { loaded: { ok: true as const, unchanged: outcome.unchanged }, summary: outcome.summary };
  if (outcome.reason === 'invalid')
    return { loaded: { ok: false as const, problems: outcome.problems }, summary: undefined };
  throw outcome.error;
}

/** The data objects and shards of a directory target, by object id. */
function objectsOf(root: string): Map<string, Buffer> {
  return new Map(readdirSync(join(root, 'o')).map((id) => [id, readFileSync(join(root, 'o', id))]));
}

function edited(change: (snapshot: Snapshot) => void): string {
  const snapshot = fixtureSnapshot();
  change(snapshot);
  return writeSnapshotFiles(snapshot);
}

describe('a publish by the same builder', () => {
  it('takes over every unchanged module, and publishes exactly what a full build does', async () => {
    const root = temporaryDirectory('reuse');
    const modules = fixtureSnapshot().modules.length;
    const first = await publishAsCli(root, writeSnapshotFiles(fixtureSnapshot()));
    expect(first.summary).toMatchObject({ mode: 'full', modulesReused: 0 });
    expect(first.loaded).toMatchObject({ ok: true, unchanged: 0 });

    const source = edited((snapshot) => {
      snapshot.modules[5]!.name = 'Renamed';
      snapshot.modules[9]!.hp += 2;
    });
    const second = await publishAsCli(root, source);
    expect(second.loaded).toMatchObject({ ok: true, unchanged: modules - 2 });
    expect(second.summary).toMatchObject({ mode: 'incremental', modulesReused: modules - 2 });

    // The same edit published from scratch, without reuse: the same version and the same objects.
    const cold = temporaryDirectory('reuse-cold');
    const reference = await publishAsCli(cold, source, 'another-builder');
    expect(reference.summary).toMatchObject({ mode: 'full', modulesReused: 0 });
    expect(second.summary!.version).toBe(reference.summary!.version);
    const published = objectsOf(root);
    for (const [id, bytes] of objectsOf(cold)) expect(published.get(id)?.equals(bytes), id).toBe(true);
  });

  it('another builder, or renamed tags (their JSON is in every module), serialise every module again', async () => {
    const root = temporaryDirectory('reuse-builder');
    await publishAsCli(root, writeSnapshotFiles(fixtureSnapshot()));
    const rename = edited((snapshot) => {
      snapshot.modules[5]!.name = 'Renamed';
    });
    const other = await publishAsCli(root, rename, 'test-builder/v2');
    expect(other.loaded).toMatchObject({ ok: true, unchanged: 0 });
    expect(other.summary).toMatchObject({ mode: 'incremental', modulesReused: 0 });

    const tags = edited((snapshot) => {
      snapshot.modules[5]!.name = 'Renamed';
      snapshot.tags[0]!.name = 'Renamed tag';
    });
    const retagged = await publishAsCli(root, tags, 'test-builder/v2');
    const modules = fixtureSnapshot().modules.length;
    // Validated as unchanged (a tag is not part of a module's record), but the bytes are serialised again.
    expect(retagged.loaded).toMatchObject({ ok: true, unchanged: modules });
    expect(retagged.summary).toMatchObject({ modulesReused: 0 });

    const cold = temporaryDirectory('reuse-builder-cold');
    const reference = await publishAsCli(cold, tags);
    expect(retagged.summary!.version).toBe(reference.summary!.version);
  });

  it('still checks every reference of an unchanged module, and every field of a changed one', async () => {
    const root = temporaryDirectory('reuse-validate');
    await publishAsCli(root, writeSnapshotFiles(fixtureSnapshot()));
    const fixture = fixtureSnapshot();
    const maker = fixture.modules[0]!.manufacturer_id;
    const users = fixture.modules.filter((module) => module.manufacturer_id === maker).map((m) => m.id);

    const source = edited((snapshot) => {
      snapshot.manufacturers = snapshot.manufacturers.filter((m) => m.id !== maker);
      (snapshot.modules[3] as unknown as Record<string, unknown>).image_url = 'https://example.com/a.png';
    });
    const refused = await publishAsCli(root, source);
    expect(refused.summary).toBeUndefined();
    if (refused.loaded.ok) throw new Error('the snapshot should be refused');
    const problems = refused.loaded.problems;
    for (const id of users) {
      expect(problems).toContainEqual(
        expect.objectContaining({ file: 'modules.json', id, field: 'manufacturer_id' }),
      );
    }
    expect(problems).toContainEqual(
      expect.objectContaining({ id: fixture.modules[3]!.id, field: 'image_url' }),
    );
  });
});
