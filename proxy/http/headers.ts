/** Header values every answer of a kind carries, named once. */

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
/**
 * Every answer depends on the caller's key (quota, and whether it is served at all), so shared caches must
 * never reuse one key's answer for another, and every request must reach the proxy to be metered.
 */
export const CACHEABLE = 'private, no-cache';
/** Errors and OPTIONS answers are never worth keeping. */
export const NOT_CACHEABLE = 'no-store';
/** Catalogue answers (200 and 304) depend on the request's Accept-Encoding, coded or not (RFC 9110 §12.5.5). */
export const VARY = 'Accept-Encoding';
export const LICENSE_LINK = '<https://creativecommons.org/licenses/by/4.0/>; rel="license"';
/** RFC 6750: a 401 names the scheme the client should use. */
export const WWW_AUTHENTICATE = 'Bearer realm="catalogue"';
/**
 * Every answer is what its Content-Type says (JSON, or nothing): a browser must never sniff it for something
 * else. Sent by the proxy itself, so that npm start and the function URL carry it as the distribution does.
 */
export const NOSNIFF = 'nosniff';
