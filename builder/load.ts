/** Reading a snapshot directory: the four files, parsed, then validated as a whole. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Problem } from './problems.js';
import { SNAPSHOT_FILES, type Snapshot } from './snapshot.js';
import { type RawSnapshot, validateSnapshot } from './validate.js';

export type LoadResult = { ok: true; snapshot: Snapshot } | { ok: false; problems: Problem[] };

/**
 * Read and validate the snapshot in `directory`. A missing or unparseable file is a problem like any other,
 * reported together with the problems of the files that did load.
 * @example
 * const loaded = await loadSnapshot('fixtures/catalogue');
 * if (!loaded.ok) for (const p of loaded.problems) console.error(formatProblem(p));
 */
export async function loadSnapshot(directory: string): Promise<LoadResult> {
  const raw: RawSnapshot = {};
  const problems: Problem[] = [];
  for (const [kind, file] of Object.entries(SNAPSHOT_FILES) as [keyof Snapshot, string][]) {
    let text: string;
    try {
      text = await readFile(join(directory, file), 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      problems.push({ file, reason: code === 'ENOENT' ? 'file is missing' : `cannot be read: ${code}` });
      continue;
    }
    try {
      raw[kind] = JSON.parse(text);
    } catch (error) {
      problems.push({ file, reason: `is not valid JSON: ${(error as Error).message}` });
    }
  }
  const validated = validateSnapshot(raw);
  if (validated.ok) return validated;
  return { ok: false, problems: [...problems, ...validated.problems] };
}
