/**
 * Reuse across publishes: a module whose source record is unchanged since the current version, published by
 * the same builder, is neither validated nor serialised again; its packed bytes are read back from the
 * current version's unfiltered id list (one object) and its record digest from the manifest.
 *
 * Sound because both are pure functions of what the key covers: the record's source (the digest of its
 * JSON), the builder (a fingerprint of the CLI bundle's code, package-lock.json and the Node.js version, given
 * by builder/launch.mjs; without one nothing is reused or recorded), and for the bytes the tags they embed.
 * The checks between records (duplicate ids, references to manufacturers, standards and tags) run on every
 * module of every publish. A repair reuses nothing.
 */

import { digest128, objectIdFor } from '../../store/layout.js';
import { type Pointer, shardOf } from '../../store/pointer.js';
import { FRAGMENTS, variantKey } from '../../store/schema.js';
import { decodePackedVariant } from '../../store/segments.js';
import type { ReusableModule, ReuseKey } from '../render/prepare.js';
import { tagJsonById } from '../render/records.js';
import { readShards } from '../render/shards.js';
import type { Tag } from '../snapshot/snapshot.js';
import type { Manifest } from './manifest.js';

/**
 * The reuse key of a build by `builder` of a snapshot with `tags`.
 * @example reuseKey('builder-fingerprint', snapshot.tags).tags // → 'x9…'
 */
export function reuseKey(builder: string, tags: readonly Tag[]): ReuseKey {
  return { builder, tags: digest128(JSON.stringify([...tagJsonById(tags)])) };
}

/**
 * The modules of the current version whose bytes a build with `key` may take over, by id; empty when its
 * manifest was written with another key or its id list cannot be read intact (then everything is serialised).
 * @example (await reusableModules(pointer, manifest, key, readShard, readObject)).get(42)?.packed
 */
export async function reusableModules(
  pointer: Pointer,
  manifest: Manifest,
  key: ReuseKey,
  readShard: (shardId: string) => Promise<Buffer>,
  readObject: (objectId: string) => Promise<Buffer | undefined>,
): Promise<Map<number, ReusableModule>> {
  const reusable = new Map<number, ReusableModule>();
  if (manifest.reuse?.builder !== key.builder || manifest.reuse.tags !== key.tags) return reusable;
  const listKey = variantKey('modules', {}, 'id');
  try {
    const shards = await readShards(pointer, [listKey], readShard);
    const entry = shards.get(shardOf(listKey, pointer.shards.length))?.get(listKey);
    if (!Array.isArray(entry)) return reusable;
    const bytes = await readObject(entry[0]);
    if (!bytes || objectIdFor(bytes) !== entry[0]) return reusable;
    const records = decodePackedVariant(bytes, FRAGMENTS.module.length);
    // The list holds every module in id order, as the manifest's rows are.
    const rows = [...manifest.modules.values()].sort((a, b) => a[0] - b[0]);
    if (records.length !== rows.length) return reusable;
    rows.forEach((row, i) => {
      reusable.set(row[0], { source: row[6], digest: row[1], packed: records[i]! });
    });
  } catch {
    reusable.clear(); // an unreadable or malformed list: serialise everything
  }
  return reusable;
}
