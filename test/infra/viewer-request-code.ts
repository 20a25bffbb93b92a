/**
 * The CloudFront Functions (infra/viewer-request.js, infra/docs-request.js) evaluated as CloudFront evaluates
 * them, without loading the CDK.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';

/** The same file as `VIEWER_REQUEST_CODE` of infra/edge.ts. */
export const VIEWER_REQUEST_FILE = fileURLToPath(new URL('../../infra/viewer-request.js', import.meta.url));

export type ViewerRequestHandler = (event: unknown) => Record<string, unknown>;

/** The same file as `DOCS_REQUEST_CODE` of infra/reference.ts. */
export const DOCS_REQUEST_FILE = fileURLToPath(new URL('../../infra/docs-request.js', import.meta.url));

/** A CloudFront Function's `handler`, evaluated from its file in a fresh context. */
function loadFunction(file: string): ViewerRequestHandler {
  const code = readFileSync(file, 'utf8');
  return runInNewContext(`${code}\n;handler`, {}, { filename: file }) as ViewerRequestHandler;
}

/** The API behaviour's function (infra/viewer-request.js). */
export function loadViewerRequest(): ViewerRequestHandler {
  return loadFunction(VIEWER_REQUEST_FILE);
}

/** The `/docs/*` behaviour's function (infra/docs-request.js). */
export function loadDocsRequest(): ViewerRequestHandler {
  return loadFunction(DOCS_REQUEST_FILE);
}

export type CloudFrontHeaders = Record<string, { value: string; multiValue?: { value: string }[] }>;

/** CloudFront's header object for one header sent with `values` (several: `multiValue` lists them all). */
export function cloudFrontHeader(values: readonly string[]): CloudFrontHeaders[string] | undefined {
  if (values.length === 0) return undefined;
  return values.length === 1
    ? { value: values[0]! }
    : { value: values[0]!, multiValue: values.map((value) => ({ value })) };
}
