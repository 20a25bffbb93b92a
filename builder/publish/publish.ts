/**
 * Publishing (DESIGN.md builder invariants 5 and 7), one code path for every WritableObjectStore, in four
 * named steps: read the current version (read.ts) → build the next one (build.ts: incrementally from the
 * current manifest when it can, else in full) → write it, objects first and the pointer last (write.ts) →
 * collect what no retained version references (collect.ts).
 */
import { POINTER_KEY } from '../../store/layout.js';
import { buildNextVersion } from './build.js';
import { collectGarbage } from './collect.js';
import { readCurrentVersion } from './read.js';
import type { Counts, PublishOptions, PublishSummary } from './types.js';
import { writeObjects, writeVersion } from './write.js';

/**
 * Publish `options.snapshot` to `options.store` under `options.prefix`, or with `dryRun` report what that
 * would change. Store faults propagate (as DependencyError); nothing written before a fault is ever visible
 * to readers.
 * @example
 * const summary = await publishCatalogue({ store: new DirectoryObjectStore('/srv/catalogue'), snapshot });
 * console.log(summary.mode, summary.objects.added, summary.bytes.added);
 */
export async function publishCatalogue(options: PublishOptions): Promise<PublishSummary> {
  const started = performance.now();
  const counts: Counts = {
    objects: { total: 0, added: 0, unchanged: 0, removed: 0 },
    bytes: { total: 0, added: 0, removed: 0 },
    uploads: options.explain ? [] : undefined,
  };

  let current = options.current;
  if (!current) {
    options.progress?.note('reading the current version');
    current = await readCurrentVersion(options.store, options.prefix);
  }
  if (current.pointerBytes && !current.pointer) {
    const at = `${options.prefix ?? ''}${POINTER_KEY}`;
    options.warn?.(`the pointer ${at} is unreadable or of an older format; replacing it`);
  }
  const next = await buildNextVersion(options, current);
  await writeObjects(next, options, counts);
  const version = await next.finish();
  const written = await writeVersion(version, current, options);
  const versionsRemoved = await collectGarbage(next, version, written, current, options, counts);

  counts.objects.total = version.manifest.objects.size;
  counts.objects.unchanged = counts.objects.total - counts.objects.added;
  for (const { size } of version.manifest.objects.values()) counts.bytes.total += size;
  return {
    dryRun: options.dryRun ?? false,
    version: version.pointer.version,
    previousVersion: current.pointer?.version ?? null,
    pointerChanged: written.pointerChanged,
    mode: next.mode,
    ...(next.fullBuildReason !== undefined && { fullBuildReason: next.fullBuildReason }),
    objects: counts.objects,
    bytes: counts.bytes,
    versionsRemoved,
    modulesReused: next.prepared.reused,
    seconds: (performance.now() - started) / 1000,
    ...(version.changes && { changes: version.changes }),
    ...(counts.uploads && { uploads: counts.uploads }),
  };
}
