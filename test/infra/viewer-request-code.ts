/** infra/viewer-request.js evaluated as CloudFront evaluates it, without loading the CDK. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';

/** The same file as `VIEWER_REQUEST_CODE` of infra/edge.ts. */
export const VIEWER_REQUEST_FILE = fileURLToPath(new URL('../../infra/viewer-request.js', import.meta.url));

export type ViewerRequestHandler = (event: unknown) => Record<string, unknown>;

/** The CloudFront Function's `handler`, evaluated from infra/viewer-request.js in a fresh context. */
export function loadViewerRequest(): ViewerRequestHandler {
  const code = readFileSync(VIEWER_REQUEST_FILE, 'utf8');
  return runInNewContext(`${code}\n;handler`, {}, { filename: VIEWER_REQUEST_FILE }) as ViewerRequestHandler;
}

export type CloudFrontHeaders = Record<string, { value: string; multiValue?: { value: string }[] }>;

/** CloudFront's header object for one header sent with `values` (several: `multiValue` lists them all). */
export function cloudFrontHeader(values: readonly string[]): CloudFrontHeaders[string] | undefined {
  if (values.length === 0) return undefined;
  return values.length === 1
    ? { value: values[0]! }
    : { value: values[0]!, multiValue: values.map((value) => ({ value })) };
}
