/**
 * The CDK app as the CDK CLI runs it (`npx tsx app.ts` in infra/, the context in CDK_CONTEXT_JSON: cdk.json's,
 * the CLI's own and the `-c` values): settings are checked like a CLI's options before anything is built.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { cdkJsonContext } from './helpers.js';

const INFRA = fileURLToPath(new URL('../../infra/', import.meta.url));

it('a misspelt and a bad setting fail synthesis with one line each, the closest name, and no stack trace', async () => {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-app-'));
  try {
    const context = {
      ...cdkJsonContext(),
      // What the CDK CLI adds to every synth.
      'aws:cdk:enable-path-metadata': true,
      'aws:cdk:enable-asset-metadata': true,
      'aws:cdk:version-reporting': true,
      'aws:cdk:bundling-stacks': ['**'],
      // npm run synth -- -c alarmEmial=ops@example.com -c memorySize=1GB
      alarmEmial: 'ops@example.com',
      memorySize: '1GB',
    };
    const failed = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'app.ts'], {
      cwd: INFRA,
      env: { PATH: process.env.PATH, CDK_CONTEXT_JSON: JSON.stringify(context), CDK_OUTDIR: outdir },
      timeout: 60_000,
    }).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );

    expect(failed?.code).toBe(1);
    expect(failed?.stderr.trimEnd().split('\n')).toEqual([
      "catalogue stack settings: unknown setting 'alarmEmial' (-c alarmEmial=…): did you mean alarmEmail?",
      "catalogue stack settings: context memorySize must be a number (got '1GB')",
    ]);
    expect(failed?.stdout).toBe('');
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
});
