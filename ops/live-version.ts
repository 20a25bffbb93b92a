/**
 * The live catalogue version and how long it has been live, read where the builder keeps them: the pointer
 * and the publication log of the catalogue location (`versions/log.json`), with the caller's credentials, as
 * `npm run catalogue -- versions` reads them. The public API names no version (its answers are the same bytes
 * whatever version holds them), so this is the smallest honest way to see it from outside the function: no new
 * header on every answer, and no admin route to the bucket.
 */
import { listVersions } from '../builder/publish/versions.js';
import { openTarget } from '../builder/target.js';
import { CheckFailure, type CheckResult, noAnswer, timed, withinDeadline } from './checks.js';

export interface CatalogueTarget {
  /** `s3://bucket/prefix/` (the stack's CatalogueUri) or a directory. */
  uri: string;
  /** An S3-compatible endpoint (npm start's s3rver). */
  endpoint?: string | undefined;
}

/**
 * How long ago, for humans: seconds, minutes, hours or days.
 * @example age(3_725_000) // → '1 h 2 min'
 */
export function age(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return `${Math.max(0, Math.round(ms / 1000))} s`;
  if (minutes < 60) return `${minutes} min`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return `${Math.floor(minutes / 1440)} days`;
}

/**
 * The live version check; skipped without a catalogue location.
 * @example await liveVersionCheck({ uri: 's3://bucket/catalogue/' }, Date.now() + 25_000, () => new Date())
 */
export function liveVersionCheck(
  target: CatalogueTarget | { skip: string },
  deadline: number,
  now: () => Date,
): Promise<CheckResult> {
  return timed('live version', async () => {
    if ('skip' in target) return target;
    const opened = await openTarget(target.uri, target.endpoint);
    try {
      const listing = await withinDeadline(listVersions(opened.store, opened.prefix), deadline, () =>
        opened.close(),
      ).catch((error: unknown) => {
        if (error instanceof CheckFailure) throw error;
        throw new CheckFailure(`${opened.description}: ${noAnswer(error)}`);
      });
      if (listing.live === null) throw new CheckFailure(`${opened.description}: no version is live`);
      const entry = listing.versions.find((version) => version.live);
      const since = entry?.restored?.at ?? entry?.current_since;
      if (!since) return `${listing.live} (when it went live is not recorded)`;
      const by = entry?.published ? `, published by ${entry.published.by} (${entry.published.via})` : '';
      return `${listing.live}, live for ${age(now().getTime() - Date.parse(since))} (since ${since}${by})`;
    } finally {
      opened.close();
    }
  });
}
