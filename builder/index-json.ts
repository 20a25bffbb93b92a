/**
 * The index's JSON: exactly what fast-json-stable-stringify gives (a test compares them), written directly
 * because the index of a 25,000-module catalogue has ~270,000 list entries and the generic stringifier
 * spends seconds on it. The version is the last key in sorted order, so it is appended to the hashed text.
 */
import { type CatalogueIndex, FORMAT_VERSION, type ListEntry, objectIdFor } from '../proxy/format.js';

function sortedMembers<T>(record: Record<string, T>, value: (item: T) => string): string {
  const keys = Object.keys(record).sort();
  const parts = new Array<string>(keys.length);
  for (let i = 0; i < keys.length; i++) parts[i] = `${JSON.stringify(keys[i])}:${value(record[keys[i]!]!)}`;
  return `{${parts.join(',')}}`;
}

const listEntry = ([objectId, count, segment0End]: ListEntry) =>
  `[${JSON.stringify(objectId)},${count},${segment0End}]`;
const quoted = (objectId: string) => JSON.stringify(objectId);

/**
 * Build the index and its bytes; `version` hashes the stable JSON of everything else.
 * @example indexWithVersion({}, {}, {}).index.version // → 22 base64url characters
 */
export function indexWithVersion(
  lists: Record<string, ListEntry>,
  modules: Record<string, string>,
  manufacturers: Record<string, string>,
): { index: CatalogueIndex; indexBytes: Buffer } {
  const body =
    `{"format":${FORMAT_VERSION},"lists":${sortedMembers(lists, listEntry)},` +
    `"manufacturers":${sortedMembers(manufacturers, quoted)},"modules":${sortedMembers(modules, quoted)}`;
  const version = objectIdFor(Buffer.from(`${body}}`));
  const index: CatalogueIndex = { format: FORMAT_VERSION, version, lists, modules, manufacturers };
  return { index, indexBytes: Buffer.from(`${body},"version":${JSON.stringify(version)}}`) };
}
