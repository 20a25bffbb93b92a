/** Reading a snapshot directory: the four files, parsed, then validated as a whole. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Manifest } from '../publish/manifest.js';
import { sourceDigests, unchangedModules } from '../publish/reuse.js';
import type { Problem } from './problems.js';
import { SNAPSHOT_FILES, type Snapshot } from './snapshot.js';
import { type RawSnapshot, validateSnapshot } from './validate.js';

export type LoadResult =
  | {
      ok: true;
      snapshot: Snapshot;
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
   * The manifest of the target's current version: a module it holds unchanged, written by the same builder,
   * was validated by this same code and is checked only against the other records.
   */
  current?: Manifest;
}

/**
 * Read and validate the snapshot in `directory`. A missing or unparseable file is a problem like any other,
 * reported together with the problems of the files that did load.
 * @example
 * const loaded = await loadSnapshot('fixtures/catalogue');
 * if (!loaded.ok) for (const p of loaded.problems) console.error(formatProblem(p));
 */
export async function loadSnapshot(directory: string, options: LoadOptions = {}): Promise<LoadResult> {
  const raw: RawSnapshot = {};
  const problems: Problem[] = [];
  let modulesText: Buffer | undefined;
  for (const [kind, file] of Object.entries(SNAPSHOT_FILES) as [keyof Snapshot, string][]) {
    let bytes: Buffer;
    try {
      bytes = await readFile(join(directory, file));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      problems.push({ file, reason: code === 'ENOENT' ? 'file is missing' : `cannot be read: ${code}` });
      continue;
    }
    if (kind === 'modules') modulesText = bytes;
    try {
      raw[kind] = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      problems.push({ file, reason: `is not valid JSON: ${(error as Error).message}` });
    }
  }
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
    ...(digests && { sourceDigests: digests }),
    ...(unchanged && { unchanged: unchanged.size }),
  };
}
