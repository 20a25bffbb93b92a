/**
 * Whether `npm start` publishes its source, and what it says it serves. It keeps a publisher's work: it
 * publishes only into an empty data directory (nothing published yet, or a pointer this version cannot
 * read), or when the source the user named (CATALOGUE_SOURCE) changed since `npm start` last published it
 * there. Otherwise it serves what is published — whoever published it — and says which version and where it
 * came from.
 *
 * What `npm start` published last is recorded in `<data dir>/published.json`: the source directory, a digest
 * of its four files, the version and the time. Whether a publisher has published over it since needs no
 * record: the pointer's version then differs from the recorded one.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PUBLISHED_FILE = 'published.json';

/** What `npm start` published last into a data directory. */
export interface PublishedRecord {
  /** Absolute path of the snapshot directory. */
  source: string;
  /** Its snapshot digest when published (builder/snapshot/source.ts sourceDigest). */
  digest: string;
  version: string;
  /** ISO 8601. */
  published_at: string;
}

/** The record, or undefined when there is none (or it cannot be read: then nothing is known). */
export function readPublishedRecord(directory: string): PublishedRecord | undefined {
  try {
    const record = JSON.parse(
      readFileSync(join(directory, PUBLISHED_FILE), 'utf8'),
    ) as Partial<PublishedRecord>;
    const fields = [record.source, record.digest, record.version, record.published_at];
    return fields.every((field) => typeof field === 'string') ? (record as PublishedRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** Replace the record (written aside and renamed: a crash leaves the old record or the new). */
export function writePublishedRecord(directory: string, record: PublishedRecord): void {
  const file = join(directory, PUBLISHED_FILE);
  writeFileSync(`${file}.next`, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(`${file}.next`, file);
}

/** What the data directory's bucket holds: no pointer, a pointer this version cannot read, or a version. */
export type PublishedState =
  | { pointer: 'none' }
  | { pointer: 'unreadable' }
  | { pointer: 'current'; version: string };

export interface StartSource {
  /** Absolute path of the source `npm start` would publish. */
  path: string;
  /** The user named it (CATALOGUE_SOURCE), rather than it being the default fixture. */
  named: boolean;
  /** Its snapshot digest (builder/snapshot/source.ts); computed only when it matters (a named source, or the recorded one). */
  digest?: string;
}

export type StartDecision =
  | { publish: true; reason: string }
  | { publish: false; reason: string; version: string };

/**
 * Publish or serve (pure). Publishes when nothing readable is published, or when the named source is not what
 * `npm start` last published here (another directory, or the same one changed since); else serves.
 * @example decideStart({ pointer: 'none' }, { path: '/repo/fixtures/catalogue', named: false }, undefined)
 * // → { publish: true, reason: 'nothing is published in this data directory yet' }
 */
export function decideStart(
  state: PublishedState,
  source: StartSource,
  record: PublishedRecord | undefined,
): StartDecision {
  if (state.pointer === 'none')
    return { publish: true, reason: 'nothing is published in this data directory yet' };
  if (state.pointer === 'unreadable') {
    return { publish: true, reason: 'the published pointer is unreadable or of an older format' };
  }
  if (!source.named) {
    return {
      publish: false,
      version: state.version,
      reason: 'serving what is published (CATALOGUE_SOURCE not set)',
    };
  }
  if (record?.source !== source.path) {
    return {
      publish: true,
      reason: `CATALOGUE_SOURCE ${source.path} was not the last source npm start published here`,
    };
  }
  if (record.digest !== source.digest) {
    return {
      publish: true,
      reason: `CATALOGUE_SOURCE ${source.path} changed since npm start published it here`,
    };
  }
  return {
    publish: false,
    version: state.version,
    reason: `${source.path} is unchanged since npm start published it here at ${record.published_at}`,
  };
}

/**
 * Where the served version came from, for the ready lines.
 * @example servedFrom('Vabc', { source: '/repo/fixtures/catalogue', version: 'Vabc', published_at: '…', digest: '…' }, (p) => p)
 * // → 'published from /repo/fixtures/catalogue by npm start at …'
 */
export function servedFrom(
  version: string,
  record: PublishedRecord | undefined,
  display: (path: string) => string,
): string {
  if (!record) return 'published by a publisher (npm start has no record of publishing here)';
  if (record.version === version)
    return `published from ${display(record.source)} by npm start at ${record.published_at}`;
  return (
    `published by a publisher over what npm start published from ${display(record.source)} ` +
    `at ${record.published_at} (version ${record.version})`
  );
}
