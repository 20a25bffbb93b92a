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
import { decodePackedVariant, type PackedRecord } from '../../store/segments.js';
import { tagJsonById } from '../render/records.js';
import type { Tag } from '../snapshot/snapshot.js';
import type { Manifest, ModuleRow, ReuseKey } from './manifest.js';
import { readShards } from './shards.js';

/**
 * The digest of each module's source record, by position: of its text in modules.json when `text` (the
 * file's bytes) is given, else of its JSON. Either way equal digests mean equal records; a record only
 * formatted differently is merely not reused.
 * @example sourceDigests(snapshot.modules)[0] // → 'q2…' (22 characters)
 */
export function sourceDigests(modules: readonly unknown[], text?: Uint8Array): string[] {
  const ranges = text && elementRanges(text);
  if (ranges && ranges.length === 2 * modules.length) {
    return modules.map((_, i) => digest128(text.subarray(ranges[2 * i], ranges[2 * i + 1])));
  }
  return modules.map((module) => digest128(JSON.stringify(module) ?? 'undefined'));
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Byte ranges (start, end, start, end, …) of the objects that are elements of the top-level array of `text`,
 * which JSON.parse accepted: one pass over the bytes, skipping strings (where brackets are text). About a
 * third of what serialising every record again costs; the caller checks that there is one range per element.
 * @example elementRanges(Buffer.from('[{"a":1}, {"b":"}"}]')) // → Uint32Array [1, 8, 10, 19]
 */
export function elementRanges(text: Uint8Array): Uint32Array | undefined {
  const ranges: number[] = [];
  const end = text.length;
  let depth = 0;
  let start = 0;
  for (let i = 0; i < end; i++) {
    const c = text[i];
    if (c === QUOTE) {
      for (i++; i < end && text[i] !== QUOTE; i++) if (text[i] === BACKSLASH) i++;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth === 1) start = i;
      depth++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 1) {
        if (text[start] !== OPEN_BRACE) return undefined; // an element that is an array
        ranges.push(start, i + 1);
      }
    }
  }
  return depth === 0 ? Uint32Array.from(ranges) : undefined;
}

/**
 * The reuse key of a build by `builder` of a snapshot with `tags`.
 * @example reuseKey('builder-fingerprint', snapshot.tags).tags // → 'x9…'
 */
export function reuseKey(builder: string, tags: readonly Tag[]): ReuseKey {
  return { builder, tags: digest128(JSON.stringify([...tagJsonById(tags)])) };
}

/**
 * Positions of `modules` (raw, not yet validated) whose source digest the current version's manifest holds
 * for the same id, written by the same builder: these were validated by this same code.
 * @example unchangedModules(raw.modules, digests, manifest, builder).has(0) // → true when module 0 is unchanged
 */
export function unchangedModules(
  modules: readonly unknown[],
  digests: readonly string[],
  manifest: Manifest | undefined,
  builder: string,
): Set<number> {
  const unchanged = new Set<number>();
  if (manifest?.reuse?.builder !== builder) return unchanged;
  modules.forEach((module, position) => {
    const id = (module as { id?: unknown } | null)?.id;
    const row = typeof id === 'number' ? manifest.modules.get(id) : undefined;
    if (row?.[6] === digests[position]) unchanged.add(position);
  });
  return unchanged;
}

/** A module of the current version that a build may take over: its manifest row and packed bytes. */
export interface ReusableModule {
  row: ModuleRow;
  packed: PackedRecord;
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
      reusable.set(row[0], { row, packed: records[i]! });
    });
  } catch {
    reusable.clear(); // an unreadable or malformed list: serialise everything
  }
  return reusable;
}
