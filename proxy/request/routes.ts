/** The API's methods and routes, as the request language, the log and the OpenAPI document name them. */

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
