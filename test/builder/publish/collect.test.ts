/**
 * Garbage collection's planning (builder/publish/collect.ts), on its own: what is kept (the live version, the
 * versions within retention, anything they reference), what goes, and that nothing is deleted that cannot be
 * proven unreferenced. Retention is the publication log's (history.ts `partitionHistory`), composed here as
 * a publish composes it.
 */
import { describe, expect, it } from 'vitest';
import { planCollection } from '../../../builder/publish/collect.js';
import { type History, partitionHistory } from '../../../builder/publish/history.js';
import type { AbandonedUploads } from '../../../builder/publish/leftovers.js';
import { encodeManifest, type Manifest, manifestKey } from '../../../builder/publish/manifest.js';
import { FORMAT_VERSION, objectIdFor, objectKeyFor } from '../../../store/layout.js';
import { MemoryObjectStore } from '../../../store/objects/memory.js';

const HOUR = 3_600_000;
const NOW = new Date('2026-11-25T12:00:00Z');
const RETENTION = 24 * HOUR;
/** Version ids are 22 characters (store/layout.ts). */
const id = (name: string) => name.padEnd(22, '_');
const [LIVE, RECENT, OLD, OLDEST] = [id('live'), id('recent'), id('old'), id('oldest')];

/** A manifest naming `objects` (each of `size` bytes). */
function manifest(version: string, objects: string[], size = 10): Manifest {
  return {
    version,
    format: FORMAT_VERSION,
    shardCount: 1,
    entries: objects.length,
    modules: new Map(),
    smallEntries: new Map(),
    objects: new Map(objects.map((name) => [oid(name), { refs: 1, size }])),
    reuse: null,
    makers: new Map(),
  };
}

/** An object's id (22 characters, as the manifest stores it) by a readable name, and its key. */
const oid = (name: string) => objectIdFor(Buffer.from(name));
const key = (name: string) => objectKeyFor('', oid(name));

const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();

/** The log: LIVE current, RECENT superseded just inside retention, OLD exactly at it, OLDEST long before. */
const HISTORY: History = {
  format: 1,
  versions: [
    { version: LIVE, current_since: ago(RETENTION - 1), superseded_at: null },
    { version: RECENT, current_since: ago(RETENTION + HOUR), superseded_at: ago(RETENTION - 1) },
    { version: OLD, current_since: ago(3 * RETENTION), superseded_at: ago(RETENTION) },
    { version: OLDEST, current_since: ago(5 * RETENTION), superseded_at: ago(3 * RETENTION) },
  ],
};

/** A target holding the manifests of `manifests` (their version files: json and manifest) and `extra` files. */
async function target(manifests: Manifest[], extra: Record<string, Buffer> = {}) {
  const store = new MemoryObjectStore();
  const versionFiles = new Map<string, Set<string>>();
  for (const m of manifests) {
    await store.put(manifestKey('', m.version), encodeManifest(m));
    versionFiles.set(m.version, new Set(['json', 'manifest']));
  }
  for (const [key, bytes] of Object.entries(extra)) await store.put(key, bytes);
  const warnings: string[] = [];
  return { run: { store, warn: (message: string) => warnings.push(message) }, versionFiles, warnings };
}

/** The retained set as a publish works it out: the log's kept versions and the new (live) one. */
function retainedAt(now: Date, retentionMs: number): Set<string> {
  const { kept } = partitionHistory(HISTORY, now, retentionMs);
  return new Set([...kept.versions.map((entry) => entry.version), LIVE]);
}

const MANIFESTS = [
  manifest(LIVE, ['shared', 'live-only']),
  manifest(RECENT, ['shared', 'recent-only']),
  manifest(OLD, ['shared', 'old-only']),
  manifest(OLDEST, ['oldest-only', 'recent-only']),
];

describe('planning a collection', () => {
  it('keeps the live version and those superseded less than the retention ago; collects the rest', async () => {
    const { run, versionFiles, warnings } = await target(MANIFESTS);

    const plan = await planCollection(run, {
      retained: retainedAt(NOW, RETENTION),
      known: new Map(),
      versionFiles,
    });

    expect(plan.objects.sort()).toEqual([key('old-only'), key('oldest-only')].sort());
    expect(plan.versionFiles.sort()).toEqual([
      `versions/${OLD}.json`,
      `versions/${OLD}.manifest`,
      `versions/${OLDEST}.json`,
      `versions/${OLDEST}.manifest`,
    ]);
    expect(plan).toMatchObject({ versionsRemoved: 2, removed: { objects: 2, bytes: 20 }, journals: [] });
    expect(warnings).toEqual([]);
  });

  it('keeps a version one millisecond younger than the retention, and collects it at the retention', async () => {
    const { run, versionFiles } = await target(MANIFESTS);
    const plan = (now: Date) =>
      planCollection(run, { retained: retainedAt(now, RETENTION), known: new Map(), versionFiles });

    // OLD was superseded exactly RETENTION ago at NOW: one millisecond earlier it is still retained.
    const before = await plan(new Date(NOW.getTime() - 1));
    const at = await plan(NOW);

    expect(before.objects).not.toContain(key('old-only'));
    expect(before.versionsRemoved).toBe(1);
    expect(at.objects).toContain(key('old-only'));
    expect(at.versionsRemoved).toBe(2);
  });

  it('collects nothing when a retained version has no readable manifest', async () => {
    const corrupt = Buffer.from('not a manifest');
    const { run, versionFiles, warnings } = await target(MANIFESTS, { [manifestKey('', RECENT)]: corrupt });

    const plan = await planCollection(run, {
      retained: retainedAt(NOW, RETENTION),
      known: new Map(),
      versionFiles,
    });

    expect(plan).toMatchObject({ objects: [], versionFiles: [], journals: [], versionsRemoved: 0 });
    expect(warnings).toEqual([
      `retained version ${RECENT} has no readable manifest; nothing is collected until it expires`,
    ]);
  });

  it('leaves the objects of an expired version without a manifest, but removes its files', async () => {
    const { run, versionFiles, warnings } = await target(MANIFESTS);
    versionFiles.set(OLDEST, new Set(['json']));

    const plan = await planCollection(run, {
      retained: retainedAt(NOW, RETENTION),
      known: new Map(),
      versionFiles,
    });

    expect(plan.objects).toEqual([key('old-only')]);
    expect(plan.versionFiles).toContain(`versions/${OLDEST}.json`);
    expect(warnings).toEqual([
      '1 expired version has no manifest (an older format); their objects are left in place: `npm run catalogue -- repair` collects them',
    ]);
  });

  it('collects what killed publishes uploaded and no retained version references, and their journals', async () => {
    const { run, versionFiles } = await target(MANIFESTS);
    const abandoned: AbandonedUploads = {
      objects: new Map([
        [oid('orphan'), 7],
        [oid('shared'), 10],
        [oid('old-only'), 10],
      ]),
      journals: ['versions/pending-x-0.json'],
    };

    const plan = await planCollection(run, {
      retained: retainedAt(NOW, RETENTION),
      known: new Map(),
      versionFiles,
      abandoned,
    });

    expect(plan.objects.sort()).toEqual(['old-only', 'oldest-only', 'orphan'].map(key).sort());
    // old-only is an expired version's object anyway: only the orphan counts as left by a killed publish.
    expect(plan.abandoned).toEqual({ objects: 1, bytes: 7 });
    expect(plan.removed).toEqual({ objects: 3, bytes: 27 });
    expect(plan.journals).toEqual(['versions/pending-x-0.json']);
  });

  it('with a listing, collects every listed object no retained version references', async () => {
    const { run, versionFiles } = await target(MANIFESTS);
    const listed = new Map([
      [oid('shared'), 10],
      [oid('live-only'), 10],
      [oid('recent-only'), 10],
      [oid('stray'), 3],
    ]);

    const plan = await planCollection(run, {
      retained: retainedAt(NOW, RETENTION),
      known: new Map(),
      versionFiles,
      listed,
    });

    expect(plan.objects).toEqual([key('stray')]);
    expect(plan.removed).toEqual({ objects: 1, bytes: 3 });
  });

  it('uses the manifests in hand, and plans nothing when nothing expired and nothing was left', async () => {
    const { run } = await target([]);
    const known = new Map([[LIVE, manifest(LIVE, ['live-only'])]]);

    const plan = await planCollection(run, { retained: new Set([LIVE]), known, versionFiles: new Map() });
    const withLeftovers = await planCollection(run, {
      retained: new Set([LIVE]),
      known,
      versionFiles: new Map(),
      abandoned: { objects: new Map([[oid('live-only'), 10]]), journals: [] },
    });

    expect(plan).toMatchObject({ objects: [], versionsRemoved: 0 });
    expect(withLeftovers).toMatchObject({ objects: [], abandoned: { objects: 0, bytes: 0 } });
  });
});
