/** Reading a snapshot (a directory, or an upload's files): the four files, parsed, then validated as a whole. */
import { sourceDigests } from '../render/digests.js';
import type { Problem } from './problems.js';
import { SNAPSHOT_FILES, type Snapshot } from './snapshot.js';
import {
  jsonSyntaxReason,
  readSourceFile,
  type SnapshotSource,
  snapshotDigest,
  sourceDirectoryProblem,
} from './source.js';
import { type RawSnapshot, validateSnapshot } from './validate.js';

export type LoadOutcome =
  | {
      ok: true;
      snapshot: Snapshot;
      /** The snapshot digest of the four files (source.ts snapshotDigest): what a version records it came from. */
      digest: string;
      /** With the `builder` option: each module's source digest, for the publish (builder/publish/reuse.ts). */
      sourceDigests?: string[];
      /** With the `builder` option: modules whose own fields were not checked again, validated before. */
      unchanged?: number;
    }
  | { ok: false; problems: Problem[] };

export interface LoadOptions {
  /** The builder's fingerprint (builder/publish/reuse.ts): compute each module's source digest. */
  builder?: string;
  /**
   * What the target's current version knows of its modules: a module it holds unchanged, written by the same
   * builder, was validated by this same code and is checked only against the other records.
   */
  current?: KnownSources;
}

/** The source digests of the modules of a published version, and the builder that wrote it. */
export interface KnownSources {
  /** The builder's fingerprint; undefined when the version was written without one (nothing is trusted). */
  builder: string | undefined;
  /** The source digest of module `id` in that version (null or undefined: unknown). */
  sourceOf(id: number): string | null | undefined;
}

/**
 * Positions of `modules` (raw, not yet validated) whose source digest the current version holds for the
 * same id, written by the same builder: these were validated by this same code.
 * @example unchangedModules(raw.modules, digests, current, builder).has(0) // → true when module 0 is unchanged
 */
export function unchangedModules(
  modules: readonly unknown[],
  digests: readonly string[],
  current: KnownSources | undefined,
  builder: string,
): Set<number> {
  const unchanged = new Set<number>();
  if (current?.builder !== builder) return unchanged;
  modules.forEach((module, position) => {
    const id = (module as { id?: unknown } | null)?.id;
    const source = typeof id === 'number' ? current.sourceOf(id) : undefined;
    if (source === digests[position]) unchanged.add(position);
  });
  return unchanged;
}

/**
 * Read and validate the snapshot in `source` (a directory, or an upload's files). A missing or unparseable
 * file is a problem like any other, reported together with the problems of the files that did load; a
 * directory that is not there (or is a file) is one problem, naming it.
 * @example
 * const loaded = await loadSnapshot('fixtures/catalogue');
 * if (!loaded.ok) for (const p of loaded.problems) console.error(formatProblem(p));
 */
export async function loadSnapshot(source: SnapshotSource, options: LoadOptions = {}): Promise<LoadOutcome> {
  if (typeof source === 'string') {
    const reason = await sourceDirectoryProblem(source);
    if (reason) return { ok: false, problems: [{ file: source, reason }] };
  }
  const raw: RawSnapshot = {};
  const problems: Problem[] = [];
  const files = new Map<string, Buffer>();
  for (const [kind, file] of Object.entries(SNAPSHOT_FILES) as [keyof Snapshot, string][]) {
    const read = await readSourceFile(source, file);
    if (!read.ok) {
      problems.push({ file, reason: read.reason });
      continue;
    }
    files.set(file, read.bytes);
    const text = read.bytes.toString('utf8');
    try {
      raw[kind] = JSON.parse(text);
    } catch (error) {
      problems.push({ file, reason: jsonSyntaxReason(text, error as Error) });
    }
  }
  const modulesText = files.get(SNAPSHOT_FILES.modules);
  const { builder } = options;
  let digests: string[] | undefined;
  let unchanged: Set<number> | undefined;
  if (builder !== undefined && Array.isArray(raw.modules)) {
    digests = sourceDigests(raw.modules, modulesText);
    unchanged = unchangedModules(raw.modules, digests, options.current, builder);
  }
  const validated = validateSnapshot(raw, unchanged ? { unchangedModules: unchanged } : {});
  if (!validated.ok) return { ok: false, problems: [...problems, ...validated.problems] };
  return {
    ...validated,
    digest: snapshotDigest((file) => files.get(file)),
    ...(digests && { sourceDigests: digests }),
    ...(unchanged && { unchanged: unchanged.size }),
  };
}
