/**
 * The 503 family and timeouts: each dependency fails for real (s3rver stopped) or hangs, and the proxy
 * answers with that dependency's code at the step where it fails, fails closed, and never leaks a rejection.
 */
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../../proxy/catalogue/cursor.js';
import type { ConfigOutcome } from '../../../proxy/config.js';
import type { KeyStore } from '../../../proxy/keys/interface.js';
import type { QuotaMeter } from '../../../proxy/quota/interface.js';
import { DependencyError } from '../../../store/errors.js';
import { digest128 } from '../../../store/layout.js';
import type { GetOptions, GetOutcome, ObjectStore } from '../../../store/objects/interface.js';
import { S3ObjectStore } from '../../../store/objects/s3.js';
import { hashApiKey, type KeyRecord } from '../../../tables/keys.js';
import { type Late, lateSettlements } from '../../helpers/late.js';
import {
  CURSOR_SECRET,
  KEYS,
  objectsOf,
  PREFIX,
  type Stack,
  startStack,
  testConfig,
} from '../../helpers/proxy.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack(objectsOf(['modules?sort=id'], [101]));
});
afterAll(async () => {
  await stack?.dispose();
});

const auth = { authorization: `Bearer ${KEYS.main}` };
const never = <T>() => new Promise<T>(() => {});
/** The late rejections of the test running (made anew before each test of a failing dependency). */
let late: Late;
const codeOf = (answer: { json(): { error?: { code: string } } }) => answer.json()?.error?.code;

describe('object store down (s3rver stopped)', () => {
  it('answers 503 origin_unavailable where a read is needed, 304 for a cursor page still, and recovers', async () => {
    const handle = stack.handler({
      config: testConfig({ pointerTtlMs: 60_000, dependencyTimeoutMs: 1_000 }),
    });
    const first = await stack.call('GET', '/v1/modules?limit=10', auth, handle);
    const cursor = first.json().page.next_cursor;
    const page = await stack.call('GET', `/v1/modules?limit=10&cursor=${cursor}`, auth, handle);
    const remaining = () => stack.call('OPTIONS', '/v1/modules', auth, handle);
    await stack.s3.stop();
    try {
      const before = Number((await remaining()).headers['x-ratelimit-remaining-month']);
      for (const target of [
        '/v1/modules?limit=11',
        '/v1/modules/101',
        `/v1/modules?limit=10&cursor=${cursor}`,
      ]) {
        const answer = await stack.call('GET', target, auth, handle);
        expect(answer.status, target).toBe(503);
        expect(codeOf(answer)).toBe('origin_unavailable');
        expect(answer.headers['x-ratelimit-limit-month']).toBeUndefined();
      }
      // Not counted: the OPTIONS after the failures sees only itself counted.
      expect(Number((await remaining()).headers['x-ratelimit-remaining-month'])).toBe(before - 1);
      // A cursor page's 304 needs no read at all; answers that need none still work.
      const cached = await stack.call(
        'GET',
        `/v1/modules?limit=10&cursor=${cursor}`,
        { ...auth, 'if-none-match': page.headers.etag! },
        handle,
      );
      expect(cached.status).toBe(304);
      expect((await stack.call('GET', '/v1/modules?limit=0', auth, handle)).status).toBe(400);
      expect((await stack.call('GET', '/v1/nope', auth, handle)).status).toBe(404);
    } finally {
      await stack.s3.start();
    }
    expect((await stack.call('GET', '/v1/modules?limit=11', auth, handle)).status).toBe(200);
  });

  it('a pointer that cannot be re-checked is 503 origin_unavailable too', async () => {
    const handle = stack.handler({
      config: testConfig({ pointerTtlMs: 0, dependencyTimeoutMs: 1_000 }),
    });
    expect((await stack.call('GET', '/v1/modules/101', auth, handle)).status).toBe(200);
    await stack.s3.stop();
    try {
      const answer = await stack.call('GET', '/v1/modules/999999', auth, handle);
      expect(answer.status).toBe(503);
      expect(codeOf(answer)).toBe('origin_unavailable');
    } finally {
      await stack.s3.start();
    }
    expect((await stack.call('GET', '/v1/modules/999999', auth, handle)).status).toBe(404);
  });
});

describe('nothing published, configuration incomplete', () => {
  it('no pointer under the prefix is 503 configuration_error', async () => {
    const handle = stack.handler({ config: testConfig({ prefix: 'empty/' }) });
    for (const target of ['/v1/modules', '/v1/modules/101', '/v1/tags?limit=1']) {
      const answer = await stack.call('GET', target, auth, handle);
      expect(answer.status).toBe(503);
      expect(codeOf(answer)).toBe('configuration_error');
    }
    expect(stack.logs.at(-1)).toMatchObject({ status: 503, error: expect.stringContaining('published') });
  });

  it('an invalid configuration is 503 configuration_error, after 405 and the header checks', async () => {
    const config: ConfigOutcome = { ok: false, problems: ['CURSOR_SECRET is not set'] };
    const handle = stack.handler({ config });
    expect((await stack.call('POST', '/v1/modules', auth, handle)).status).toBe(405);
    expect(codeOf(await stack.call('GET', '/v1/modules', {}, handle))).toBe('missing_authorization');
    expect(codeOf(await stack.call('GET', '/v1/modules', { authorization: 'x' }, handle))).toBe(
      'malformed_authorization',
    );
    const answer = await stack.call('GET', '/v1/modules', auth, handle);
    expect(answer.status).toBe(503);
    expect(codeOf(answer)).toBe('configuration_error');
    expect(answer.json().error.message).not.toContain('CURSOR_SECRET');
    expect(stack.logs.at(-1)).toMatchObject({ error: expect.stringContaining('CURSOR_SECRET') });
  });
});

/** Stores that fail in the given way. */
const failing = {
  throws: {
    keys: { lookup: () => Promise.reject(new DependencyError('keys', 'down')) } as KeyStore,
    quota: {
      meter: () => Promise.reject(new Error('socket hang up')),
      refund: () => Promise.reject(new Error('socket hang up')),
    } as QuotaMeter,
    objects: { get: () => Promise.reject(new DependencyError('objects', 'down')) } as ObjectStore,
  },
  hangs: {
    keys: { lookup: () => never() } as KeyStore,
    quota: { meter: () => never(), refund: () => never() } as QuotaMeter,
    objects: { get: () => never() } as ObjectStore,
  },
  'rejects late': {
    keys: {
      lookup: () => late.reject(200),
    } as KeyStore,
    quota: {
      meter: () => late.reject(200),
      refund: () => late.reject(200),
    } as QuotaMeter,
    objects: {
      get: () => late.reject(200),
    } as ObjectStore,
  },
};

describe.each(Object.keys(failing) as (keyof typeof failing)[])('a dependency that %s', (how) => {
  const stores = failing[how];
  const config = testConfig({ dependencyTimeoutMs: 60 });
  beforeEach(() => {
    late = lateSettlements();
  });

  it.each([
    ['keys', 'authentication_unavailable'],
    ['quota', 'quota_unavailable'],
    ['objects', 'origin_unavailable'],
  ] as const)('%s → 503 %s within the timeout, unmetered', async (dependency, code) => {
    const handle = stack.handler({ config, [dependency]: stores[dependency] });
    const started = performance.now();
    // Keys and quota are checked on an answer that needs no object read, so a slow s3rver cannot interfere.
    const target = dependency === 'objects' ? '/v1/modules?limit=5' : '/v1/modules?limit=0';
    const answer = await stack.call('GET', target, auth, handle);
    expect(answer.status).toBe(503);
    expect(codeOf(answer)).toBe(code);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(answer.headers['x-ratelimit-limit-month']).toBeUndefined();
    expect(stack.logs.at(-1)).toMatchObject({ status: 503, error: expect.stringContaining(dependency) });
    expect(await late.settled()).toEqual([]); // late settlements must stay handled
  });
});

describe('precedence among failures', () => {
  const down = testConfig({ dependencyTimeoutMs: 60 });
  it('405 and the Authorization header checks need no dependency', async () => {
    const handle = stack.handler({ config: down, ...failing.throws });
    expect((await stack.call('PUT', '/v1/modules', auth, handle)).status).toBe(405);
    expect(codeOf(await stack.call('GET', '/v1/modules', {}, handle))).toBe('missing_authorization');
  });

  it('keys before quota before objects', async () => {
    expect(
      codeOf(
        await stack.call('GET', '/v1/modules', auth, stack.handler({ config: down, ...failing.throws })),
      ),
    ).toBe('authentication_unavailable');
    const { quota } = failing.throws;
    expect(
      codeOf(await stack.call('GET', '/v1/tags?limit=0', auth, stack.handler({ config: down, quota }))),
    ).toBe('quota_unavailable');
  });

  it('an unknown key is 401 even when the quota store is down', async () => {
    const handle = stack.handler({ config: down, quota: failing.throws.quota });
    expect(
      codeOf(await stack.call('GET', '/v1/modules', { authorization: `Bearer ${KEYS.unknown}` }, handle)),
    ).toBe('invalid_key');
  });

  it('a key the store already knows needs no lookup: served, or refused, with the key store down', async () => {
    const record = await stack.keys.lookup(hashApiKey(KEYS.main));
    const knowing = (known: KeyRecord | null): KeyStore => ({
      known: () => known,
      lookup: () => Promise.reject(new DependencyError('keys', 'down')),
    });
    // The key store fails at once; the object reads need the time a loaded machine takes (not `down`'s 60 ms).
    const patient = testConfig({ dependencyTimeoutMs: 2_000 });
    const served = stack.handler({ config: patient, keys: knowing(record!) });
    expect((await stack.call('GET', '/v1/modules', auth, served)).status).toBe(200);
    const refused = stack.handler({ config: patient, keys: knowing(null) });
    expect(codeOf(await stack.call('GET', '/v1/modules', auth, refused))).toBe('invalid_key');
    // What it does not know, it looks up: here that fails.
    const unsure: KeyStore = { ...knowing(null), known: () => undefined };
    expect(
      codeOf(await stack.call('GET', '/v1/modules', auth, stack.handler({ config: patient, keys: unsure }))),
    ).toBe('authentication_unavailable');
  });

  it('with the origin down, a request that needs no object is metered and answered', async () => {
    const handle = stack.handler({ config: down, objects: failing.throws.objects });
    expect((await stack.call('OPTIONS', '/v1/modules', auth, handle)).status).toBe(204);
    expect((await stack.call('GET', '/v1/modules?q=x', auth, handle)).status).toBe(400);
  });
});

describe('cursors whose object is gone', () => {
  /** Requests counted so far, as the meter's headers say (the OPTIONS counts itself). */
  const counted = async () =>
    10_000_000 -
    Number((await stack.call('OPTIONS', '/v1/modules', auth)).headers['x-ratelimit-remaining-month']);

  it('a cursor page of the current version whose object S3 lost: 503 origin_unavailable, retryable, not counted', async () => {
    const cursor = (await stack.call('GET', '/v1/modules?limit=10')).json().page.next_cursor;
    const key = `${PREFIX}o/${stack.index.lists['modules?sort=id']![0]}`;
    const sdk = new S3ObjectStore({ client: stack.client, bucket: stack.s3.bucket });
    const kept = await sdk.get(key);
    if (!kept.ok) throw new Error(`${key} is not in s3rver`);
    // Really gone: S3 answers NoSuchKey to the page's range read.
    await stack.client.send(new DeleteObjectCommand({ Bucket: stack.s3.bucket, Key: key }));
    try {
      const before = await counted();
      const answer = await stack.call('GET', `/v1/modules?limit=10&cursor=${cursor}`, auth);
      expect(answer.status).toBe(503);
      expect(codeOf(answer)).toBe('origin_unavailable');
      expect(answer.headers['x-ratelimit-limit-month']).toBeUndefined();
      expect(stack.logs.at(-1)).toMatchObject({
        status: 503,
        error: expect.stringContaining('current version'),
      });
      // Only the OPTIONS after it was counted.
      expect(await counted()).toBe(before + 1);
    } finally {
      await sdk.put(key, kept.body);
    }
    // Once the store has it again, the same cursor is served: the consumer was right to retry.
    expect((await stack.call('GET', `/v1/modules?limit=10&cursor=${cursor}`, auth)).status).toBe(200);
  });

  it('a cursor of a collected version (its object gone and not the current one) is 400 invalid_parameter, asking to start again', async () => {
    const cursor = (await stack.call('GET', '/v1/modules?limit=10')).json().page.next_cursor;
    const state = decodeCursor(cursor, 'modules?sort=id', CURSOR_SECRET)!;
    // The same page of a version published before, collected since: another object, not in the store.
    const collected = encodeCursor(
      { ...state, objectId: digest128('an earlier version of the list') },
      'modules?sort=id',
      CURSOR_SECRET,
    );
    const answer = await stack.call('GET', `/v1/modules?limit=10&cursor=${collected}`, auth);
    expect(answer.status).toBe(400);
    expect(answer.json().error).toMatchObject({
      code: 'invalid_parameter',
      message: expect.stringContaining('expired'),
    });
  });

  it('an object the index names but the store lacks is an origin fault (503), not a client error', async () => {
    const objectId = stack.index.modules['101']!;
    const broken: ObjectStore = {
      get: (key: string, options?: GetOptions): Promise<GetOutcome> =>
        key === `${PREFIX}o/${objectId}`
          ? Promise.resolve({ ok: false, reason: 'not-found' })
          : stack.objects.get(key, options),
    };
    const answer = await stack.call('GET', '/v1/modules/101', auth, stack.handler({ objects: broken }));
    expect(answer.status).toBe(503);
    expect(codeOf(answer)).toBe('origin_unavailable');
  });
});
