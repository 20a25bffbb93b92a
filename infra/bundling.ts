/**
 * What the stack's three functions (the proxy, the admin API, the upload builder) share: Node.js 24 on arm64,
 * bundled from this repository by the local esbuild into one minified ESM file with a source map. Each
 * bundle's esbuild metafile (what each input weighs: the size budgets of test/infra and bench section 10) goes
 * beside the cloud assembly's files as `<stack>.<function>.meta.json`, never into the asset, which holds only
 * what Lambda loads (index.mjs and its source map).
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stack, Stage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import {
  LogLevel,
  type NodejsFunctionProps,
  OutputFormat,
  SourceMapMode,
} from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The metafile's name for `fn` (`proxy-function`, `upload-builder`, `admin-function`) after the stack's id. */
export function metafileSuffix(fn: string): string {
  return `.${fn}.meta.json`;
}

/**
 * Where the metafile of `fn` goes: beside the cloud assembly's files, as an absolute path. esbuild runs in the
 * repository root, while the CDK CLI names the assembly relative to infra/ (`CDK_OUTDIR=cdk.out`): a relative
 * path would put the metafile in the repository root's cdk.out/ instead.
 * @example metafilePath(stack, 'proxy-function') // → '/…/infra/cdk.out/Catalogue.proxy-function.meta.json'
 */
export function metafilePath(scope: Construct, fn: string): string {
  return resolve(Stage.of(scope)?.assetOutdir ?? '.', `${Stack.of(scope).artifactId}${metafileSuffix(fn)}`);
}

export interface BundledFunction {
  /** Names its metafile (see {@link metafileSuffix}). */
  fn: string;
  /** The TypeScript file that exports `handler`. */
  entry: string;
  /** Packages left out of the bundle (`@aws-sdk/*` for the proxy, which carries no SDK); none by default. */
  externalModules?: string[];
}

/**
 * The props of a `NodejsFunction` built from this repository: entry, runtime, architecture and bundling.
 * @example new NodejsFunction(this, 'Function', { ...bundledFunction(this, { fn: 'admin-function', entry }), memorySize: 256 })
 */
export function bundledFunction(
  scope: Construct,
  { fn, entry, externalModules = [] }: BundledFunction,
): NodejsFunctionProps {
  return {
    entry,
    handler: 'handler',
    projectRoot: REPO_ROOT,
    depsLockFilePath: fileURLToPath(new URL('../package-lock.json', import.meta.url)),
    // Node.js 24 (the active LTS): measured against 22 with the same bundle (bench section 10) and tested on
    // it by `npm test` (test/runtime/), which runs the proxy's suites on that version too.
    runtime: lambda.Runtime.NODEJS_24_X,
    architecture: lambda.Architecture.ARM_64,
    bundling: {
      // No Docker: esbuild is a devDependency, and synthesis must work offline.
      forceDockerBundling: false,
      // The repository is ESM ("type": "module"), and so is the bundle.
      format: OutputFormat.ESM,
      target: 'node24',
      mainFields: ['module', 'main'],
      // CommonJS packages (aws4, the SDK's clients, tar) call require() for Node built-ins, which ESM output
      // does not define.
      banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      externalModules,
      esbuildArgs: { '--metafile': metafilePath(scope, fn) },
      minify: true,
      sourceMap: true,
      sourceMapMode: SourceMapMode.DEFAULT,
      // Stack traces need names and line numbers, not the sources: keeps the asset small.
      sourcesContent: false,
      tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)),
      logLevel: LogLevel.WARNING,
    },
  };
}
