/**
 * The upload builder's Lambda entry (infra/upload-builder.ts bundles this file): the handler of lambda.ts, its
 * errors' stacks mapped through the bundle's source map when an invocation fails (report/stacks.ts), so the
 * function starts without `--enable-source-maps` and still logs a crash in the repository's terms.
 */
import { handler as handleUploads } from './lambda.js';
import { withMappedStacks } from './report/stacks.js';

export const handler = withMappedStacks(handleUploads, import.meta.url);
