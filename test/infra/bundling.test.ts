/**
 * Where a function's esbuild metafile goes: beside the cloud assembly's files, as docs/architecture.md says,
 * also when the assembly directory is relative to another directory than the repository root. The CDK CLI
 * runs the app in infra/ with `CDK_OUTDIR=cdk.out`, while esbuild runs in the repository root: a relative
 * metafile path landed in the root's cdk.out/.
 */
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { describe, expect, it } from 'vitest';
import { bundledFunction, metafilePath, REPO_ROOT } from '../../infra/bundling.js';
import { PROXY_ENTRY } from '../../infra/proxy-function.js';
import { cdkJsonContext } from './helpers.js';

describe('the metafile', () => {
  it('is named by the stack and the function, as an absolute path in the assembly directory', () => {
    const app = new App({ outdir: join('some', 'cdk.out') });
    const stack = new Stack(app, 'Catalogue');

    const path = metafilePath(stack, 'proxy-function');

    expect(isAbsolute(path)).toBe(true);
    expect(path).toBe(join(process.cwd(), 'some', 'cdk.out', 'Catalogue.proxy-function.meta.json'));
  });

  it('lands beside the assembly when the app runs elsewhere than the repository root, as the CDK CLI runs it', () => {
    const appDir = realpathSync(mkdtempSync(join(tmpdir(), 'cat-metafile-')));
    const wrongPlace = join(REPO_ROOT, 'cdk.out', 'Metafile.proxy-function.meta.json');
    const hadRootOut = existsSync(join(REPO_ROOT, 'cdk.out'));
    const before = process.cwd();
    try {
      process.chdir(appDir);
      const app = new App({ outdir: 'cdk.out', context: cdkJsonContext() });
      const stack = new Stack(app, 'Metafile');
      new NodejsFunction(
        stack,
        'Function',
        bundledFunction(stack, { fn: 'proxy-function', entry: PROXY_ENTRY }),
      );

      const assembly = resolve(app.synth().directory);

      expect(assembly).toBe(join(appDir, 'cdk.out'));
      expect(readdirSync(assembly).filter((name) => name.endsWith('.meta.json'))).toEqual([
        'Metafile.proxy-function.meta.json',
      ]);
      expect(existsSync(wrongPlace)).toBe(false);
    } finally {
      process.chdir(before);
      rmSync(hadRootOut ? wrongPlace : join(REPO_ROOT, 'cdk.out'), { recursive: true, force: true });
      rmSync(appDir, { recursive: true, force: true });
    }
    // One esbuild bundle and a synthesis: seconds, more on a busy machine.
  }, 120_000);
});
