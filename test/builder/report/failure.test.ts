/**
 * A failed publish says what to do: "run the same build again" only for faults that pass; for refused
 * credentials, a missing bucket, nothing listening or a server that fails every attempt, what to fix.
 * Table tests on the error shapes the SDK and the file system throw, then the CLI against real servers.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { type LocalServer, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXIT, main } from '../../../builder/cli.js';
import { explainPublishFailure, type FailureKind } from '../../../builder/report/failure.js';
import { DependencyError } from '../../../store/errors.js';
import {
  removeTemporaryDirectories,
  smallSnapshot,
  temporaryDirectory,
  writeSnapshotFiles,
} from '../../helpers/builder.js';

const RERUN = 'run the same build again';

/** An SDK service error as the store wraps it. */
function s3Fault(name: string, status?: number, attempts = 1): DependencyError {
  const cause = Object.assign(new Error(name), {
    name,
    $metadata: { httpStatusCode: status, attempts },
  });
  return new DependencyError('objects', `s3 put o/x failed (${name} ${status ?? ''})`, { cause });
}

/** A Node system error (network or file system) as the store wraps it. */
function systemFault(code: string): DependencyError {
  const cause = Object.assign(new Error(`${code} something`), { code });
  return new DependencyError('objects', `put o/x failed: ${code}`, { cause });
}

const target = { description: 's3://catalogue/', endpoint: 'http://127.0.0.1:4569' };

describe('explainPublishFailure', () => {
  it.each<[string, unknown, FailureKind]>([
    ['AccessDenied 403', s3Fault('AccessDenied', 403), 'permission'],
    ['a bare 403', s3Fault('Forbidden', 403), 'permission'],
    ['InvalidAccessKeyId', s3Fault('InvalidAccessKeyId', 403), 'credentials'],
    ['SignatureDoesNotMatch', s3Fault('SignatureDoesNotMatch', 403), 'credentials'],
    ['ExpiredToken', s3Fault('ExpiredToken', 400), 'credentials'],
    ['no credentials at all', new Error('x', { cause: { name: 'CredentialsProviderError' } }), 'credentials'],
    ['NoSuchBucket', s3Fault('NoSuchBucket', 404), 'target'],
    ['PermanentRedirect (another region)', s3Fault('PermanentRedirect', 301), 'target'],
    ['connection refused', systemFault('ECONNREFUSED'), 'unreachable'],
    ['unknown host', systemFault('ENOTFOUND'), 'unreachable'],
    ['500 InternalError on every attempt', s3Fault('InternalError', 500, 5), 'server'],
    ['501 NotImplemented', s3Fault('NotImplemented', 501), 'server'],
    ['SlowDown 503', s3Fault('SlowDown', 503, 5), 'transient'],
    ['a bare 503', s3Fault('ServiceUnavailable', 503, 5), 'transient'],
    ['throttling', s3Fault('ThrottlingException', 400, 5), 'transient'],
    ['429', s3Fault('TooManyRequests', 429, 5), 'transient'],
    ['a gateway timeout', s3Fault('GatewayTimeout', 504, 5), 'transient'],
    ['RequestTimeout', s3Fault('RequestTimeout', 400), 'transient'],
    [
      'the SDK timeout',
      new DependencyError('objects', 'x', { cause: { name: 'TimeoutError' } }),
      'transient',
    ],
    ['connection reset', systemFault('ECONNRESET'), 'transient'],
    ['socket timeout', systemFault('ETIMEDOUT'), 'transient'],
    ['DNS not answering', systemFault('EAI_AGAIN'), 'transient'],
    ['disk full', systemFault('ENOSPC'), 'local'],
    ['read-only file system', systemFault('EROFS'), 'local'],
    ['no permission on a directory', systemFault('EACCES'), 'local'],
    ['anything else', new Error('something new'), 'unknown'],
  ])('%s → %s', (_, error, kind) => {
    const explained = explainPublishFailure(error, target);

    expect(explained.kind).toBe(kind);
    // The promise of this module: only a fault that can pass tells the user to simply run it again.
    expect(explained.advice.includes(RERUN)).toBe(explained.rerun);
    expect(explained.rerun).toBe(kind === 'transient' || kind === 'unknown');
  });

  it('names what to fix', () => {
    const say = (error: unknown) => explainPublishFailure(error, target).advice;

    expect(say(s3Fault('AccessDenied', 403))).toMatch(/s3:ListBucket .* s3:PutObject, s3:DeleteObject/);
    expect(say(s3Fault('InvalidAccessKeyId', 403))).toMatch(/AWS_PROFILE/);
    expect(say(s3Fault('NoSuchBucket', 404))).toMatch(
      /the bucket of s3:\/\/catalogue\/ does not exist at http:\/\/127\.0\.0\.1:4569: check --out/,
    );
    expect(say(s3Fault('PermanentRedirect', 301))).toMatch(/AWS_REGION/);
    expect(say(systemFault('ECONNREFUSED'))).toMatch(/nothing answers at http:\/\/127\.0\.0\.1:4569/);
    expect(say(s3Fault('InternalError', 500, 5))).toMatch(/failed on all 5 attempts with 500 InternalError/);
    expect(say(systemFault('ENOSPC'))).toMatch(/the disk is full/);
    expect(say(s3Fault('SlowDown', 503, 5))).toMatch(/on all 5 attempts: run the same build again/);
  });
});

describe('build exits 3 with the advice that fits, against real servers', () => {
  let s3: (LocalServer & { bucket: string }) | undefined;
  let s3Directory = '';
  let source = '';

  beforeAll(async () => {
    s3Directory = temporaryDirectory('s3');
    s3 = await startS3('failure-test', { directory: s3Directory });
    source = writeSnapshotFiles(smallSnapshot(5));
  });

  afterAll(async () => {
    await s3?.dispose();
    removeTemporaryDirectories();
  });

  async function build(out: string, endpoint: string): Promise<{ code: number; err: string }> {
    const err: string[] = [];
    const spyOut = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const spyErr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      err.push(String(chunk));
      return true;
    });
    try {
      return {
        code: await main(['build', '--source', source, '--out', out, '--endpoint', endpoint]),
        err: err.join(''),
      };
    } finally {
      spyOut.mockRestore();
      spyErr.mockRestore();
    }
  }

  it('a missing bucket: check --out, no re-run', async () => {
    const result = await build('s3://no-such-bucket/x', s3!.endpoint);

    expect(result.code).toBe(EXIT.publishFailed);
    expect(result.err).toContain(
      'the previous version is still current; the bucket of s3://no-such-bucket/x/',
    );
    expect(result.err).not.toContain(RERUN);
  });

  it('refused credentials: check the AWS credentials, no re-run', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'NOT-S3RVER');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'wrong');
    try {
      const result = await build(`s3://${s3!.bucket}/x`, s3!.endpoint);

      expect(result.code).toBe(EXIT.publishFailed);
      expect(result.err).toMatch(/InvalidAccessKeyId[\s\S]*check AWS_PROFILE/);
      expect(result.err).not.toContain(RERUN);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a server that fails every attempt with 500: check the server, no re-run', async () => {
    // A file where s3rver needs a directory: every write under the prefix fails inside the server.
    mkdirSync(join(s3Directory, s3!.bucket), { recursive: true });
    writeFileSync(join(s3Directory, s3!.bucket, 'blocked'), 'not a directory');
    const result = await build(`s3://${s3!.bucket}/blocked`, s3!.endpoint);

    expect(result.code).toBe(EXIT.publishFailed);
    expect(result.err).toMatch(/\(InternalError 500\)[\s\S]*the storage server failed on all \d attempts/);
    expect(result.err).not.toContain(RERUN);
  });

  it('a stopped server: check --endpoint, no re-run', async () => {
    const stopped = await startS3('stopped');
    await stopped.dispose();
    const result = await build('s3://stopped/x', stopped.endpoint);

    expect(result.code).toBe(EXIT.publishFailed);
    expect(result.err).toContain(`nothing answers at ${stopped.endpoint}`);
    expect(result.err).not.toContain(RERUN);
  });

  it('a server that drops connections: run the same build again', async () => {
    const dropper: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((ready) => dropper.listen(0, '127.0.0.1', ready));
    const { port } = dropper.address() as { port: number };
    try {
      const result = await build('s3://dropping/x', `http://127.0.0.1:${port}`);

      expect(result.code).toBe(EXIT.publishFailed);
      expect(result.err).toContain(
        `a temporary fault (network, timeout or throttling) on all 5 attempts: ${RERUN}`,
      );
    } finally {
      await new Promise((closed) => dropper.close(closed));
    }
  });
});
