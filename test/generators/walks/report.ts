/**
 * What every walk prints (one JSON line on stdout): each request as the generated client sent it, and what it
 * got. test/proxy/openapi.generators.test.ts asks the API the same with one comma list and compares.
 */
export interface Sent {
  /** The request's path and query, as it went out (`/v1/modules?fields=name&fields=hp…`). */
  target: string;
  status: number;
  etag: string | null;
  /**
   * The Accept-Encoding to ask with for the same representation (each coding has its own ETag): the coding the
   * API chose (`Content-Encoding`, `identity` without one), or the header the client sent when it hides the
   * coding (axios decodes the body and drops `Content-Encoding`).
   */
  acceptEncoding: string;
  body: unknown;
}

export interface WalkReport {
  /** The module list with two fields and an include, page after page along next_cursor. */
  pages: Sent[];
  /** A module detail with two includes. */
  module: Sent;
  /** A manufacturer detail with its include. */
  manufacturer: Sent;
}

/** The request's path and query from its full URL. */
export const targetOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

export const PAGE_SIZE = 70;
export const MODULE_ID = 101;
export const MANUFACTURER_ID = 1;

/** The base URL and key, from the variables npm start prints. */
export function settings(env: Record<string, string | undefined>): { url: string; key: string } {
  const url = env.CATALOGUE_URL;
  const key = env.CATALOGUE_KEY;
  if (!url || !key) throw new Error('set CATALOGUE_URL and CATALOGUE_KEY');
  return { url, key };
}
