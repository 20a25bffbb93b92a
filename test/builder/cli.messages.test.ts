/**
 * What a publisher sees when the S3 target is wrong: the bucket, region and endpoint are named, and the AWS
 * SDK's Node-version notice is not printed (as with `npm start`).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type LocalServer, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_DIR } from '../helpers/builder.js';

let s3: LocalServer;
beforeAll(async () => {
  s3 = await startS3('cli-messages');
});
afterAll(async () => {
  await s3?.dispose();
});

async function build(args: string[], env: Record<string, string>) {
  const { PATH, HOME } = process.env;
  try {
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'builder/cli.ts', 'build', ...args], {
      cwd: REPO_DIR,
      env: { PATH, HOME, ...env },
    });
    return { code: 0, stderr: '' };
  } catch (error) {
    const { code, stderr } = error as { code: number; stderr: string };
    return { code, stderr };
  }
}

it('a missing bucket: exit 3, the bucket, region and endpoint named, no SDK notice', async () => {
  const run = await build(
    ['--source', 'fixtures/catalogue', '--out', 's3://no-such-bucket/v1', '--endpoint', s3.endpoint],
    { AWS_REGION: 'eu-west-1' },
  );

  expect(run.code).toBe(3);
  expect(run.stderr).toMatch(
    new RegExp(
      `^publish failed: .*NoSuchBucket.*; target: S3 bucket no-such-bucket in eu-west-1 at ${s3.endpoint}\\n` +
        'the previous version is still current',
    ),
  );
  expect(run.stderr).not.toContain('NodeVersionSupportWarning');
});
