/**
 * What killed or failed publishes leave behind, and how the next ordinary publish collects it without
 * listing the target's objects:
 *
 * - the temporary files of a directory target's interrupted writes (store.collectTemporary), removed first;
 * - the objects a publish uploaded before it failed (a full disk, a lost network, a kill): before it uploads
 *   anything, a publish records what it is about to upload in its journal, chunks of at most
 *   {@link JOURNAL_BATCH} object ids (`<prefix>versions/pending-<owner>-<n>.json`), and removes the journal
 *   once it has finished. A journal found by a later publish (which holds the lock, so its writer is gone)
 *   names every object that publish may have left: the collection step (collect.ts) deletes those no
 *   retained version references — after the new version is written, so a publish run again after a failure
 *   keeps what the failed run uploaded and uploads only the rest — then the journal.
 */
import { OBJECT_ID_PATTERN, VERSIONS_DIR } from '../../store/layout.js';
import { type CurrentVersion, readObject } from './read.js';
import type { PublishOptions } from './types.js';

/** Object ids per journal chunk: written before the uploads it names. */
export const JOURNAL_BATCH = 256;

/** The objects interrupted publishes may have left (with their sizes), and the journals that name them. */
export interface AbandonedUploads {
  objects: Map<string, number>;
  journals: string[];
}

/**
 * The journal of one publish's uploads.
 * @example
 * const journal = new UploadJournal(store, prefix, lock.holder.owner);
 * await journal.record(batch); // then upload the batch
 * await journal.remove(); // once the publish has finished
 */
export class UploadJournal {
  readonly #keys: string[] = [];

  constructor(
    readonly store: PublishOptions['store'],
    readonly prefix: string,
    readonly owner: string,
  ) {}

  /** Record objects about to be uploaded (written before them: a kill after this leaves nothing unnamed). */
  async record(objects: readonly { objectId: string; size: number }[]): Promise<void> {
    if (objects.length === 0) return;
    const key = `${this.prefix}${VERSIONS_DIR}pending-${this.owner}-${this.#keys.length}.json`;
    const body = { owner: this.owner, objects: objects.map(({ objectId, size }) => [objectId, size]) };
    await this.store.put(key, Buffer.from(JSON.stringify(body)), { contentType: 'application/json' });
    this.#keys.push(key);
  }

  /** Remove the journal: the publish finished (nothing it uploaded is left unreferenced, or it was collected). */
  async remove(): Promise<void> {
    await this.store.delete(this.#keys.splice(0));
  }
}

/** The objects a journal chunk names, with their sizes; none when it is unreadable (a torn write). */
function journalObjects(bytes: Buffer | undefined): [string, number][] {
  try {
    const value = JSON.parse(bytes?.toString('utf8') ?? '') as { objects?: unknown };
    if (!Array.isArray(value.objects)) return [];
    return value.objects.filter(
      (row): row is [string, number] =>
        Array.isArray(row) &&
        typeof row[0] === 'string' &&
        OBJECT_ID_PATTERN.test(row[0]) &&
        typeof row[1] === 'number',
    );
  } catch {
    return [];
  }
}

/**
 * Remove the temporary files interrupted writes left (a directory target), when their writer is gone.
 * `repair` also looks among the objects, which it lists anyway.
 */
export async function collectTemporaryFiles(options: PublishOptions): Promise<number> {
  return (await options.store.collectTemporary?.({ deep: options.repair ?? false })) ?? 0;
}

/**
 * What the journals of other publishes name (they are gone: this one holds the lock); undefined when there
 * are none.
 */
export async function abandonedUploads(
  options: PublishOptions,
  current: CurrentVersion,
  owner: string,
): Promise<AbandonedUploads | undefined> {
  const journals = current.journals.filter((journal) => journal.owner !== owner);
  if (journals.length === 0) return undefined;
  const objects = new Map<string, number>();
  for (const { key } of journals) {
    for (const [objectId, size] of journalObjects(await readObject(options.store, key)))
      objects.set(objectId, size);
  }
  return { objects, journals: journals.map(({ key }) => key) };
}
