/**
 * The first step of every build: each record of a validated snapshot serialised once into its fragments
 * (store/segments.ts), with the orders and digests that the jobs (jobs.ts) and an incremental build need.
 * Pure and deterministic. A module whose source record is unchanged since the current version, written by
 * the same builder, is taken over from that version's bytes instead of being serialised again
 * (builder/publish/reuse.ts finds them).
 */

import { nameCollator } from '../../store/schema.js';
import type { PackedRecord } from '../../store/segments.js';
import { packRecord } from '../../store/segments.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { DIGEST_BYTES, recordDigest, sourceDigests, writeRecordDigest } from './digests.js';
import {
  idOrder,
  manufacturerFragments,
  moduleFragments,
  nameOrder,
  standardFragments,
  tagFragments,
  tagJsonById,
} from './records.js';

/**
 * What the serialised modules of a version depend on besides their source records: the builder that wrote
 * them (its code, dependencies and Node.js) and the tags their bytes embed. Equal keys, reusable records.
 */
export interface ReuseKey {
  builder: string;
  tags: string;
}

/** A module of the current version that a build may take over: its source and record digests, its bytes. */
export interface ReusableModule {
  /** Digest of its source record when that version was written (null: not recorded). */
  source: string | null;
  /** Digest of its packed record (base64url). */
  digest: string;
  packed: PackedRecord;
}

/** A snapshot with every record serialised once, and what an incremental build compares. */
export interface PreparedCatalogue {
  snapshot: Snapshot;
  /** Packed fragments of each module, by position in `snapshot.modules`. */
  packedModules: PackedRecord[];
  /** 16-byte digest of each packed module (position `p` at `16 * p`): equal digests, equal records. */
  moduleDigests: Buffer;
  /** Module positions in id order and in name order. */
  byId: number[];
  byName: number[];
  /** The records of the small lists (standards, tags, manufacturers), packed, by position in the snapshot. */
  packedStandards: PackedRecord[];
  packedTags: PackedRecord[];
  packedManufacturers: PackedRecord[];
  /**
   * Manufacturers in id order, each with the digest of its own record (its detail's fields besides
   * `modules`) and the positions of its modules in id order: an incremental build renders the details of
   * the manufacturers an edit touches, a full build all of them.
   */
  makers: { id: number; digest: string; record: PackedRecord; modules: number[] }[];
  /** Digest of each module's source record (render/digests.ts); null without a reuse key. */
  sourceDigests: string[] | null;
  reuse: ReuseKey | null;
  /** Modules whose bytes were taken over from the current version rather than serialised. */
  reused: number;
}

export interface PrepareOptions {
  /**
   * The reuse key of this build (builder/publish/reuse.ts reuseKey: the builder's fingerprint and the tags):
   * record source digests and the key in the manifest, for the next publish. Without it nothing is recorded.
   */
  reuse?: ReuseKey;
  /** The source digests of the snapshot's modules, when already computed (by loadSnapshot). */
  sourceDigests?: string[];
  /** Modules of the current version to take over when their source is unchanged, by id. */
  reusable?: ReadonlyMap<number, ReusableModule>;
}

/**
 * Serialise every record of a validated snapshot once.
 * @example prepareCatalogue(snapshot).byName // → module positions in name order
 */
export function prepareCatalogue(snapshot: Snapshot, options: PrepareOptions = {}): PreparedCatalogue {
  const { modules, manufacturers } = snapshot;
  const { reuse, reusable } = options;
  const sources = reuse === undefined ? null : (options.sourceDigests ?? sourceDigests(modules));
  const tagJson = tagJsonById(snapshot.tags);
  const packedModules: PackedRecord[] = new Array(modules.length);
  const moduleDigests = Buffer.alloc(DIGEST_BYTES * modules.length);
  let reused = 0;
  modules.forEach((module, position) => {
    const previous = reusable?.get(module.id);
    if (previous && sources && previous.source === sources[position]) {
      packedModules[position] = previous.packed;
      moduleDigests.write(previous.digest, DIGEST_BYTES * position, DIGEST_BYTES, 'base64url');
      reused++;
    } else {
      packedModules[position] = moduleFragments(module, tagJson);
      writeRecordDigest(packedModules[position]!, moduleDigests, position);
    }
  });
  const byId = idOrder(modules);
  const byName = nameOrder(modules, nameCollator);

  const packedManufacturers = manufacturers.map((manufacturer) =>
    packRecord(manufacturerFragments(manufacturer)),
  );
  const modulesByMaker = new Map<number, number[]>();
  for (const position of byId) {
    const makerId = modules[position]!.manufacturer_id;
    let list = modulesByMaker.get(makerId);
    if (!list) {
      list = [];
      modulesByMaker.set(makerId, list);
    }
    list.push(position);
  }
  const makers = idOrder(manufacturers).map((position) => {
    const { id } = manufacturers[position]!;
    const record = packedManufacturers[position]!;
    return { id, digest: recordDigest(record), record, modules: modulesByMaker.get(id) ?? [] };
  });
  return {
    snapshot,
    packedModules,
    moduleDigests,
    byId,
    byName,
    packedStandards: snapshot.standards.map((standard) => packRecord(standardFragments(standard))),
    packedTags: snapshot.tags.map((tag) => packRecord(tagFragments(tag))),
    packedManufacturers,
    makers,
    sourceDigests: sources,
    reuse: reuse ?? null,
    reused,
  };
}
