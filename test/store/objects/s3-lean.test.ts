/**
 * The lean object read (LeanS3ObjectStore) against s3rver, answer for answer the same as the SDK's
 * S3ObjectStore; its faults (403, stopped, slowed, silent, aborted) as DependencyErrors; and its signature
 * checked against the bytes actually sent.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { type LocalServer, startS3 } from '@catalogue/local-aws';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialProvider, s3Client } from '../../../aws/sdk.js';
import { DependencyError } from '../../../store/errors.js';
import type { GetOptions, ObjectStore } from '../../../store/objects/interface.js';
import { S3ObjectStore } from '../../../store/objects/s3.js';
import { encodeKey, LeanS3ObjectStore, objectAddress } from '../../../store/objects/s3-lean.js';
import { CHECK_CREDENTIALS, type SigV4CheckServer, startSigV4Check } from '../../helpers/sigv4-check.js';
import { type SlowProxy, startSlowProxy } from '../../helpers/slow-proxy.js';

const BUCKET = 'lean-test';
const BYTES = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
const KEYS = ['cat/o/plain', 'cat/o/with space, comma & ünïcødé!(*)', 'cat/current.json'];

let s3: LocalServer & { bucket: string };
let sdkClient: ReturnType<typeof s3Client>;
let sdk: S3ObjectStore;
const opened: LeanS3ObjectStore[] = [];

function leanStore(options: Partial<ConstructorParameters<typeof LeanS3ObjectStore>[0]> = {}) {
  const store = new LeanS3ObjectStore({
    bucket: BUCKET,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    credentials: credentialProvider(s3.endpoint),
    ...options,
  });
  opened.push(store);
  return store;
}

beforeAll(async () => {
  s3 = await startS3(BUCKET);
  sdkClient = s3Client({ endpoint: s3.endpoint });
  sdk = new S3ObjectStore({ client: sdkClient, bucket: BUCKET });
  for (const key of KEYS) await sdk.put(key, BYTES);
});
afterAll(async () => {
  for (const store of opened) await store.close();
  sdkClient?.destroy();
  await s3?.dispose();
});

/** The outcome of a get as a comparable value: the answer, or the fault's dependency and message. */
async function outcome(store: ObjectStore, key: string, options?: GetOptions) {
  try {
    const result = await store.get(key, options);
    return result.ok ? { ok: true, etag: result.etag, bytes: result.body.toString('hex') } : result;
  } catch (error) {
    if (!(error instanceof DependencyError)) throw error;
    return { fault: error.dependency, message: error.message };
  }
}

describe('LeanS3ObjectStore answers as S3ObjectStore does (s3rver)', () => {
  it.each([
    ['whole object', KEYS[0]!, {}],
    ['first bytes', KEYS[0]!, { range: [0, 100] }],
    ['a middle range', KEYS[0]!, { range: [1234, 4321] }],
    ['a range running past the end (clamped)', KEYS[0]!, { range: [4990, 6000] }],
    ['a key with spaces, commas and non-ASCII', KEYS[1]!, { range: [10, 20] }],
    ['a missing key (not-found)', 'cat/o/missing', {}],
    ['a range starting past the end (416: fault)', KEYS[0]!, { range: [6000, 6100] }],
  ] as [string, string, GetOptions][])('%s', async (_, key, options) => {
    const lean = leanStore();
    const expected = await outcome(sdk, key, options);
    expect(await outcome(lean, key, options)).toEqual(expected);
    if ('bytes' in expected && options.range) {
      const [start, end] = options.range;
      expect(expected.bytes).toBe(BYTES.subarray(start, end).toString('hex'));
    }
  });

  it('answers not-modified for the current ETag, the bytes for another', async () => {
    const lean = leanStore();
    const first = await lean.get(KEYS[2]!);
    if (!first.ok) throw new Error(first.reason);
    expect(first.etag).toMatch(/^"[0-9a-f]{32}"$/);

    expect(await lean.get(KEYS[2]!, { ifNoneMatch: first.etag })).toEqual({
      ok: false,
      reason: 'not-modified',
    });
    expect(await outcome(lean, KEYS[2]!, { ifNoneMatch: '"other"' })).toMatchObject({ ok: true });
    expect(await outcome(sdk, KEYS[2]!, { ifNoneMatch: first.etag })).toEqual({
      ok: false,
      reason: 'not-modified',
    });
  });

  it('a bucket that does not exist is not-found, as with the SDK', async () => {
    const wrong = leanStore({ bucket: 'no-such-bucket' });
    const sdkWrong = new S3ObjectStore({ client: sdkClient, bucket: 'no-such-bucket' });
    expect(await outcome(wrong, KEYS[0]!)).toEqual({ ok: false, reason: 'not-found' });
    expect(await outcome(sdkWrong, KEYS[0]!)).toEqual({ ok: false, reason: 'not-found' });
  });

  it('refused credentials (403) are a fault naming the status and S3 error code', async () => {
    const credentials = async () => ({ accessKeyId: 'NOT-A-KEY', secretAccessKey: 'x' });
    const refused = await outcome(leanStore({ credentials }), KEYS[0]!);
    expect(refused).toEqual({
      fault: 'objects',
      message: `s3 get ${KEYS[0]} failed (InvalidAccessKeyId 403)`,
    });
    const sdkRefused = new S3Client({
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'NOT-A-KEY', secretAccessKey: 'x' },
    });
    try {
      const viaSdk = await outcome(new S3ObjectStore({ client: sdkRefused, bucket: BUCKET }), KEYS[0]!);
      expect(viaSdk).toMatchObject({
        fault: 'objects',
        message: expect.stringContaining('InvalidAccessKeyId'),
      });
    } finally {
      sdkRefused.destroy();
    }
  });

  it('rejects an empty range before any request, as every store does', async () => {
    await expect(leanStore().get(KEYS[0]!, { range: [5, 5] })).rejects.toBeInstanceOf(RangeError);
  });
});

describe('LeanS3ObjectStore faults', () => {
  let slow: SlowProxy;
  beforeAll(async () => {
    slow = await startSlowProxy({ targetPort: s3.port });
  });
  afterAll(async () => {
    await slow?.close();
  });

  it('a stopped server is a DependencyError; after a restart the same store reads again', async () => {
    const lean = leanStore();
    expect(await outcome(lean, KEYS[0]!, { range: [0, 10] })).toMatchObject({ ok: true });
    await s3.stop();
    try {
      const down = await lean.get(KEYS[0]!, { range: [0, 10] }).catch((error: unknown) => error);
      expect(down).toBeInstanceOf(DependencyError);
      expect(down).toMatchObject({ dependency: 'objects', message: expect.stringMatching(/ECONN|SOCKET/) });
    } finally {
      await s3.start();
    }
    expect(await outcome(lean, KEYS[0]!, { range: [0, 10] })).toMatchObject({ ok: true });
  });

  it.each([
    ['slowed past the deadline', () => slow.setDelay(5_000)],
    ['accepting connections and never answering', () => slow.setMode('blackhole')],
  ])(
    'a server %s: the abort signal ends the call with a DependencyError; then it recovers',
    async (_, fault) => {
      const lean = leanStore({ endpoint: slow.endpoint });
      expect(await outcome(lean, KEYS[0]!)).toMatchObject({ ok: true });
      fault();
      slow.dropConnections();
      try {
        const late = await lean
          .get(KEYS[0]!, { signal: AbortSignal.timeout(200) })
          .catch((error: unknown) => error);
        expect(late).toMatchObject({ name: 'DependencyError', dependency: 'objects' });
        expect((late as DependencyError).message).toContain('AbortError');
      } finally {
        slow.setDelay(0);
        slow.setMode('pass');
        slow.dropConnections();
      }
      expect(await outcome(lean, KEYS[0]!)).toMatchObject({ ok: true });
    },
  );

  it('an already aborted signal fails at once', async () => {
    const aborted = await leanStore()
      .get(KEYS[0]!, { signal: AbortSignal.abort() })
      .catch((error: unknown) => error);
    expect(aborted).toMatchObject({ name: 'DependencyError', dependency: 'objects' });
  });
});

describe('what LeanS3ObjectStore sends', () => {
  let check: SigV4CheckServer;
  beforeAll(async () => {
    const seen = new Map<string, number>();
    check = await startSigV4Check((request, response) => {
      const times = (seen.get(request.path) ?? 0) + 1;
      seen.set(request.path, times);
      const s3Error = (status: number, code: string) =>
        response
          .writeHead(status, { 'content-type': 'application/xml' })
          .end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code></Error>`);
      if (request.path.includes('slow-down-once') && times === 1) return s3Error(503, 'SlowDown');
      if (request.path.includes('internal-always')) return s3Error(500, 'InternalError');
      if (request.path.includes('forbidden')) return s3Error(403, 'AccessDenied');
      if (request.headers['if-none-match'] === '"same"') {
        response.writeHead(304).end();
        return;
      }
      response.writeHead(206, { etag: '"e"', 'content-type': 'application/octet-stream' }).end('partial');
    });
  });
  afterAll(async () => {
    await check?.close();
  });

  it('a signed path-style GET with Range and If-None-Match, signature matching the bytes sent', async () => {
    const lean = leanStore({ endpoint: check.endpoint, credentials: async () => CHECK_CREDENTIALS });
    check.requests.length = 0;

    const ok = await lean.get(KEYS[1]!, { range: [100, 200] });
    const cached = await lean.get(KEYS[0]!, { ifNoneMatch: '"same"' });

    expect(ok).toEqual({ ok: true, body: Buffer.from('partial'), etag: '"e"' });
    expect(cached).toEqual({ ok: false, reason: 'not-modified' });
    expect(check.requests.map((r) => [r.method, r.path, r.headers.range, r.problem])).toEqual([
      ['GET', `/${BUCKET}/${encodeKey(KEYS[1]!)}`, 'bytes=100-199', undefined],
      ['GET', `/${BUCKET}/${KEYS[0]}`, undefined, undefined],
    ]);
    expect(check.requests[0]!.headers.authorization).toContain('/us-east-1/s3/aws4_request');
    expect(check.requests[1]!.headers['if-none-match']).toBe('"same"');
  });

  it('sends a throttled (503 SlowDown) or failed (500) GET once more, as the SDK does; a 403 once', async () => {
    const lean = leanStore({ endpoint: check.endpoint, credentials: async () => CHECK_CREDENTIALS });
    check.requests.length = 0;
    expect(await lean.get('v1/o/slow-down-once', { range: [0, 7] })).toEqual({
      ok: true,
      body: Buffer.from('partial'),
      etag: '"e"',
    });
    await expect(lean.get('v1/o/internal-always')).rejects.toThrow(
      's3 get v1/o/internal-always failed (InternalError 500)',
    );
    await expect(lean.get('v1/o/forbidden')).rejects.toThrow(
      's3 get v1/o/forbidden failed (AccessDenied 403)',
    );
    expect(check.requests.map((r) => [r.path.split('/').pop(), r.problem])).toEqual([
      ['slow-down-once', undefined],
      ['slow-down-once', undefined],
      ['internal-always', undefined],
      ['internal-always', undefined],
      ['forbidden', undefined],
    ]);
  });

  it('signs with the credential chain: the environment as on Lambda (session token included), fixed ones for loopback', async () => {
    const lambdaEnv = {
      AWS_ACCESS_KEY_ID: 'AKIDFROMENV',
      AWS_SECRET_ACCESS_KEY: 'secret-from-env',
      AWS_SESSION_TOKEN: 'token-from-env',
    };
    const saved = Object.fromEntries(Object.keys(lambdaEnv).map((name) => [name, process.env[name]]));
    Object.assign(process.env, lambdaEnv);
    try {
      const fromEnv = await credentialProvider(undefined)();
      const loopback = await credentialProvider(check.endpoint)();
      expect(fromEnv).toMatchObject({ accessKeyId: 'AKIDFROMENV', sessionToken: 'token-from-env' });
      // As the SDK clients do (aws/sdk.ts): environment credentials win over the local fixed ones.
      expect(loopback).toMatchObject({ accessKeyId: 'AKIDFROMENV' });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    expect(await credentialProvider(check.endpoint)()).toEqual({
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
    });

    check.requests.length = 0;
    const lean = leanStore({
      endpoint: check.endpoint,
      credentials: async () => ({ ...CHECK_CREDENTIALS, sessionToken: 'session' }),
    });
    await lean.get(KEYS[0]!);
    const [sent] = check.requests;
    expect(sent!.headers['x-amz-security-token']).toBe('session');
    expect(sent!.headers.authorization).toMatch(/SignedHeaders=[^,]*x-amz-security-token/);
    expect(sent!.problem).toBeUndefined();
  });

  it('the check itself refuses a request whose path differs from the signed one', async () => {
    const signer = new SignatureV4({
      service: 's3',
      region: 'us-east-1',
      credentials: CHECK_CREDENTIALS,
      sha256: Sha256,
      uriEscapePath: false,
    });
    const host = new URL(check.endpoint).host;
    const signed = await signer.sign({
      method: 'GET',
      protocol: 'http:',
      hostname: '127.0.0.1',
      path: '/bucket/signed',
      query: {},
      headers: { host },
    });
    check.requests.length = 0;
    const answer = await request(`${check.endpoint}/bucket/sent`, { headers: signed.headers });
    await answer.body.dump();
    expect(check.requests[0]!.problem).toBe('signature does not match the request as received');
  });
});

describe('addresses', () => {
  it.each([
    [
      { bucket: 'cat', region: 'eu-west-1' },
      { origin: 'https://cat.s3.eu-west-1.amazonaws.com', base: '/' },
    ],
    [
      { bucket: 'my.cat', region: 'us-east-1' },
      { origin: 'https://s3.us-east-1.amazonaws.com', base: '/my.cat/' },
    ],
    [
      { bucket: 'cat', region: 'us-east-1', endpoint: 'http://127.0.0.1:4568' },
      { origin: 'http://127.0.0.1:4568', base: '/cat/' },
    ],
    [
      { bucket: 'cat', region: 'us-east-1', endpoint: 'https://storage.example/s3/' },
      { origin: 'https://storage.example', base: '/s3/cat/' },
    ],
  ])('%j → %j', (options, expected) => {
    expect(objectAddress(options)).toEqual(expected);
  });

  it('encodes keys as S3 signs them: all but unreserved characters and /', () => {
    expect(encodeKey("a/b c!'()*~._-ü")).toBe('a/b%20c%21%27%28%29%2A~._-%C3%BC');
  });
});
