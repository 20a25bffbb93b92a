/**
 * Where a function's esbuild metafile goes (what each input of the bundle weighs: the size budgets of
 * test/infra and bench section 10): beside the cloud assembly's files as `<stack>.<function>.meta.json`,
 * never into the asset, which holds only what Lambda loads (index.mjs and its source map).
 */
import { join } from 'node:path';
import { Stack, Stage } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

/** The metafile's name for `fn` (`proxy-function`, `upload-builder`, `admin-function`) after the stack's id. */
export function metafileSuffix(fn: string): string {
  return `.${fn}.meta.json`;
}

/** esbuild's arguments that write `scope`'s bundle's metafile beside the assembly (`bundling.esbuildArgs`). */
export function metafileArgs(scope: Construct, fn: string): { '--metafile': string } {
  return {
    '--metafile': join(
      Stage.of(scope)?.assetOutdir ?? '.',
      `${Stack.of(scope).artifactId}${metafileSuffix(fn)}`,
    ),
  };
}
