/**
 * The migration from object format 2 to format 3 (store/layout.ts), as an operator does it: deploy the new
 * proxy first — it serves a target published in format 2 (ranges of lists over 100 records unverified, the
 * rest checked), answers exactly as the oracle — then publish with the new builder over it: a full build in
 * format 3, and the same proxy serves it from its next pointer re-check, every read checked. A cursor walk
 * begun on format 2 (its cursors carry no digest) goes on to its end across the publish.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { publishCatalogue } from '../../builder/publish/publish.js';
import { renderCatalogue } from '../../builder/render/full.js';
import type { Snapshot } from '../../builder/snapshot/snapshot.js';
import { objectIdFor, objectKeyFor, POINTER_KEY } from '../../store/layout.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import {
  encodePointer,
  encodeShard,
  type IndexEntry,
  parsePointer,
  parseShard,
} from '../../store/pointer.js';
import { decodePackedVariant, decodeSegment, encodePackedVariant } from '../../store/segments.js';
import { queryString, snapshotArb } from '../oracle/arbitraries.js';
import { expectSame, PARTNER_KEY, testProxy } from '../oracle/harness.js';
import { CursorBook, Oracle } from '../oracle/oracle.js';

const PREFIX = 'cat/';
const AUTH = `Bearer ${PARTNER_KEY}`;

/** The snapshot published as the previous builder did (format 2): objects without digests, 3-tuple entries. */
async function publishFormat2(store: MemoryObjectStore, snapshot: Snapshot): Promise<void> {
  const rendered = renderCatalogue(snapshot);
  const pointer = parsePointer(rendered.pointerBytes)!;
  const shardIds: string[] = [];
  for (const shardId of pointer.shards) {
    const entries = new Map<string, IndexEntry>();
    for (const [key, entry] of Object.entries(parseShard(rendered.objects.get(shardId)!)!)) {
      const id = typeof entry === 'string' ? entry : entry[0];
      const bytes = rendered.objects.get(id)!;
      const f = decodeSegment(bytes, 0).fragmentsPerRecord;
      const records = decodePackedVariant(bytes, f);
      const old = encodePackedVariant(
        records,
        records.map((_, i) => i),
        f,
        2,
      );
      const oldId = objectIdFor(old.bytes);
      await store.put(objectKeyFor(PREFIX, oldId), old.bytes);
      entries.set(key, typeof entry === 'string' ? oldId : [oldId, entry[1], old.segment0End]);
    }
    const shard = encodeShard(entries, 2);
    shardIds.push(objectIdFor(shard));
    await store.put(objectKeyFor(PREFIX, objectIdFor(shard)), shard);
  }
  await store.put(`${PREFIX}${POINTER_KEY}`, encodePointer(shardIds, 2).bytes);
}

describe('format 2 → format 3', () => {
  it('the new proxy serves format 2, then the format-3 publish over it; a walk goes on across', async () => {
    const snapshot = fc.sample(snapshotArb({ minModules: 230, maxModules: 260 }), {
      numRuns: 1,
      seed: 3,
    })[0]!;
    const store = new MemoryObjectStore();
    await publishFormat2(store, snapshot);
    const handle = testProxy({
      objects: store,
      prefix: PREFIX,
      env: { POINTER_TTL_MS: '0', BYTE_CACHE_MB: '8' },
    });
    const oracle = new Oracle({ snapshot, keys: [PARTNER_KEY] });
    const ask = async (path: string, params: [string, string][], book: CursorBook) => {
      const query = queryString(params);
      const actual = await handle({ method: 'GET', path, query, headers: { authorization: AUTH } });
      const expected = oracle.answer({ method: 'GET', path, query, authorization: AUTH }, book);
      return expectSame(`GET ${path}?${query}`, actual, expected, book);
    };

    // Served from format 2: lists of more than one segment, their cursor pages, details, small lists.
    const book = new CursorBook();
    let cursor = await ask('/v1/modules', [['limit', '60']], book);
    expect(cursor).not.toBeNull();
    // A format-2 cursor carries no digest: it is the shorter, version-1 form.
    expect(Buffer.from(cursor!, 'base64url').byteLength).toBe(45);
    cursor = await ask(
      '/v1/modules',
      [
        ['limit', '60'],
        ['cursor', cursor!],
      ],
      book,
    );
    for (const module of snapshot.modules.slice(0, 5))
      await ask(`/v1/modules/${module.id}`, [['include', 'tags']], book);
    await ask('/v1/tags', [['sort', 'name']], book);

    // Then the new builder publishes over it: the version it finds is of format 2, so a full build.
    const warnings: string[] = [];
    const summary = await publishCatalogue({
      store,
      prefix: PREFIX,
      snapshot,
      warn: (m) => warnings.push(m),
    });
    expect(summary.mode).toBe('full');
    expect(summary.fullBuildReason).toMatch(/object format 2; this builder writes format 3/);
    const current = await store.get(`${PREFIX}${POINTER_KEY}`);
    expect(current.ok && parsePointer(current.body)?.format).toBe(3);

    // The walk begun on format 2 goes on to its end, on the version its cursors pin.
    while (cursor !== null)
      cursor = await ask(
        '/v1/modules',
        [
          ['limit', '60'],
          ['cursor', cursor],
        ],
        book,
      );
    // A new walk is on format 3: its cursors carry their range's digest.
    const walk = new CursorBook();
    let next = await ask('/v1/modules', [['limit', '60']], walk);
    expect(Buffer.from(next!, 'base64url').byteLength).toBe(61);
    while (next !== null)
      next = await ask(
        '/v1/modules',
        [
          ['limit', '60'],
          ['cursor', next],
        ],
        walk,
      );
  });
});
