/** Names and values shared by the proxy core and its adapters. */

export const ALLOWED_METHODS = ['GET', 'HEAD', 'OPTIONS'] as const;
export type AllowedMethod = (typeof ALLOWED_METHODS)[number];
export const ALLOW_HEADER = ALLOWED_METHODS.join(', ');

/** Route templates, as they appear in log lines and in the OpenAPI document. */
export const ROUTES = {
  modules: '/v1/modules',
  module: '/v1/modules/{id}',
  manufacturers: '/v1/manufacturers',
  manufacturer: '/v1/manufacturers/{id}',
  standards: '/v1/standards',
  tags: '/v1/tags',
} as const;
export type RouteTemplate = (typeof ROUTES)[keyof typeof ROUTES];
export type RouteName = RouteTemplate | 'unknown';

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
