/**
 * The cursor secret from Secrets Manager (proxy/cursor-secret.ts): read at cold start with a lean signed
 * GetSecretValue against a local server speaking the Secrets Manager protocol, 503
 * configuration_error (after 405 and 401) while it cannot be read, retried by a later request, re-read when
 * it is older than its bound, and never in the configuration.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxy } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import type { ProxyHandler, ProxyRequest, ProxyResponse, RequestLogLine } from '../../proxy/core/types.js';
import { createSecretProxy, secretReader } from '../../proxy/cursor-secret.js';
import { MemoryKeyStore } from '../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../proxy/quota/memory.js';
import { DependencyError } from '../../store/errors.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import { KEYS, PREFIX, publishFixture } from '../helpers/proxy.js';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalogue-cursor-AbCdEf';
const SECRET_A = 'a'.repeat(64);
const SECRET_B = 'b'.repeat(64);
const authorization = `Bearer ${KEYS.main}`;
const get = (
  path: string,
  query = '',
  headers: Record<string, string> = { authorization },
): ProxyRequest => ({
  method: 'GET',
  path,
  query,
  headers,
});
const codeOf = (response: ProxyResponse) => JSON.parse(response.body?.toString() ?? '{}').error?.code;

let objects: MemoryObjectStore;

beforeAll(async () => {
  objects = new MemoryObjectStore();
  await publishFixture(objects);
});

/** The real wiring with the secret named by ARN, a clock and a scripted secret source. */
function wired(fetchCursorSecret: () => Promise<string>) {
  const clock = { ms: Date.parse('2026-11-23T10:00:00Z') };
  const keys = new MemoryKeyStore();
  keys.add(KEYS.main, { limits: { minute: 1e9, month: 1e9 } });
  const config = loadConfig({
    CATALOGUE_BUCKET: 'b',
    CATALOGUE_PREFIX: PREFIX,
    KEYS_TABLE: 'k',
    COUNTERS_TABLE: 'c',
    CURSOR_SECRET_ARN: ARN,
    CURSOR_SECRET_MAX_AGE_MS: '60000',
  });
  const handle = createProxy(config, {
    objects,
    keys,
    quota: new MemoryQuotaMeter(),
    log: () => {},
    now: () => new Date(clock.ms),
    fetchCursorSecret,
  });
  return { handle, clock, config };
}

describe('configuration', () => {
  it('takes the ARN instead of the value, and refuses both at once', () => {
    const base = { CATALOGUE_BUCKET: 'b', KEYS_TABLE: 'k', COUNTERS_TABLE: 'c' };

    const byArn = loadConfig({ ...base, CURSOR_SECRET_ARN: ARN });
    const both = loadConfig({ ...base, CURSOR_SECRET_ARN: ARN, CURSOR_SECRET: SECRET_A });
    const notAnArn = loadConfig({ ...base, CURSOR_SECRET_ARN: 'catalogue-cursor' });

    expect(byArn).toMatchObject({ ok: true, config: { cursorSecret: '', cursorSecretArn: ARN } });
    expect(both).toEqual({ ok: false, problems: ['set only one of CURSOR_SECRET and CURSOR_SECRET_ARN'] });
    expect(notAnArn).toEqual({ ok: false, problems: ['CURSOR_SECRET_ARN is not a Secrets Manager ARN'] });
  });
});

describe('createProxy with CURSOR_SECRET_ARN', () => {
  it('reads the secret once at cold start and serves with it', async () => {
    let reads = 0;
    const { handle } = wired(async () => {
      reads++;
      return SECRET_A;
    });

    const answers = await Promise.all([handle(get('/v1/tags')), handle(get('/v1/modules', 'limit=2'))]);
    await handle(get('/v1/standards'));

    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(reads).toBe(1);
  });

  it('answers 503 configuration_error while the secret cannot be read, after 405 and 401, and retries later', async () => {
    let reads = 0;
    const { handle, clock } = wired(async () => {
      reads++;
      if (reads === 1) throw new DependencyError('configuration', 'Secrets Manager unreachable');
      return SECRET_A;
    });

    const failed = await handle(get('/v1/tags'));
    const method = await handle({ ...get('/v1/tags'), method: 'DELETE' });
    const noKey = await handle(get('/v1/tags', '', {}));
    const soon = await handle(get('/v1/tags'));
    clock.ms += 1_000;
    const later = await handle(get('/v1/tags'));

    expect([failed.status, codeOf(failed)]).toEqual([503, 'configuration_error']);
    expect([method.status, noKey.status]).toEqual([405, 401]);
    expect([soon.status, codeOf(soon)]).toEqual([503, 'configuration_error']);
    expect(later.status).toBe(200);
    expect(reads).toBe(2);
  });

  it('refuses a secret shorter than 32 characters with 503 configuration_error', async () => {
    const { handle } = wired(async () => 'short');

    const answer = await handle(get('/v1/tags'));

    expect([answer.status, codeOf(answer)]).toEqual([503, 'configuration_error']);
  });

  it('re-reads the secret once it is older than its bound; a rotated secret ends the old cursors', async () => {
    let secret = SECRET_A;
    let reads = 0;
    const { handle, clock } = wired(async () => {
      reads++;
      return secret;
    });
    const first = await handle(get('/v1/modules', 'limit=2'));
    const cursor = JSON.parse(first.body!.toString()).page.next_cursor as string;

    secret = SECRET_B;
    clock.ms += 59_999;
    const withinBound = await handle(get('/v1/modules', `limit=2&cursor=${cursor}`));
    clock.ms += 1;
    // The request that finds the secret due is served with the held one while the new one is read.
    const due = await handle(get('/v1/modules', `limit=2&cursor=${cursor}`));
    const rotated = await handle(get('/v1/modules', `limit=2&cursor=${cursor}`));

    expect(withinBound.status).toBe(200);
    expect(due.status).toBe(200);
    expect([rotated.status, codeOf(rotated)]).toEqual([400, 'invalid_parameter']);
    expect(reads).toBe(2);
  });
});

describe('createSecretProxy', () => {
  const answering =
    (status: number): ProxyHandler =>
    async () => ({ status, headers: {}, body: undefined });

  it('keeps serving with the held secret when a re-read fails', async () => {
    const clock = { ms: 0 };
    let fail = false;
    const handle = createSecretProxy({
      fetchSecret: async () => {
        if (fail) throw new Error('down');
        return SECRET_A;
      },
      build: () => answering(200),
      unavailable: () => answering(503),
      maxAgeMs: 1_000,
      now: () => clock.ms,
    });
    await handle(get('/v1/tags'));

    fail = true;
    clock.ms += 5_000;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await handle(get('/v1/tags'))).status);

    expect(statuses).toEqual([200, 200, 200]);
  });
});

describe('secretReader (a lean signed GetSecretValue) against a local Secrets Manager', () => {
  let server: Server;
  let endpoint: string;
  const seen: { target: string | undefined; secretId: string }[] = [];
  let delayMs = 0;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
        seen.push({ target: request.headers['x-amz-target'] as string | undefined, secretId: body.SecretId });
        setTimeout(() => {
          response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
          response.end(
            JSON.stringify({ ARN: ARN, Name: 'catalogue-cursor', SecretString: SECRET_A, VersionId: 'v1' }),
          );
        }, delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  });

  it('reads the string value with one GetSecretValue per call', async () => {
    const read = secretReader(ARN, { timeoutMs: 2_000, endpoint, region: 'eu-west-1' });

    expect(await read()).toBe(SECRET_A);
    expect(await read()).toBe(SECRET_A);
    expect(seen).toEqual([
      { target: 'secretsmanager.GetSecretValue', secretId: ARN },
      { target: 'secretsmanager.GetSecretValue', secretId: ARN },
    ]);
  });

  it('gives up at its deadline with a configuration DependencyError', async () => {
    delayMs = 1_000;
    const read = secretReader(ARN, { timeoutMs: 100, endpoint, region: 'eu-west-1' });

    await expect(read()).rejects.toMatchObject({ name: 'DependencyError', dependency: 'configuration' });
    delayMs = 0;
  });

  it('fails with a configuration DependencyError when Secrets Manager is not there', async () => {
    const stopped = createServer();
    await new Promise<void>((resolve) => stopped.listen(0, '127.0.0.1', resolve));
    const port = (stopped.address() as AddressInfo).port;
    await new Promise<void>((resolve) => stopped.close(() => resolve()));
    const read = secretReader(ARN, {
      timeoutMs: 1_000,
      endpoint: `http://127.0.0.1:${port}`,
      region: 'eu-west-1',
    });

    await expect(read()).rejects.toMatchObject({ name: 'DependencyError', dependency: 'configuration' });
  });
});

describe('right under Lambda’s life cycle (the process is frozen between invocations)', () => {
  /** The real wiring with the secret named by ARN, with what the wiring does recorded. */
  function recorded(fetchCursorSecret: () => Promise<string>) {
    const clock = { ms: Date.parse('2026-11-23T10:00:00Z') };
    const keys = new MemoryKeyStore();
    keys.add(KEYS.main, { limits: { minute: 1e9, month: 1e9 } });
    const events: string[] = [];
    const lines: RequestLogLine[] = [];
    const config = loadConfig({
      CATALOGUE_BUCKET: 'b',
      CATALOGUE_PREFIX: PREFIX,
      KEYS_TABLE: 'k',
      COUNTERS_TABLE: 'c',
      CURSOR_SECRET_ARN: ARN,
      CURSOR_SECRET_MAX_AGE_MS: '60000',
    });
    const handle = createProxy(config, {
      objects: {
        get: (key, options) => {
          events.push(`read ${key.endsWith('current.json') ? 'pointer' : 'object'}`);
          return objects.get(key, options);
        },
      },
      keys: {
        lookup: (hash) => {
          events.push('key lookup');
          return keys.lookup(hash);
        },
      },
      quota: new MemoryQuotaMeter(),
      log: (line) => 'status' in line && lines.push(line),
      now: () => new Date(clock.ms),
      fetchCursorSecret: async () => {
        events.push('secret read');
        return fetchCursorSecret();
      },
    });
    return { handle, clock, events, lines };
  }
  const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('answers what needs no cursor secret while it cannot be read: OPTIONS, details, 400 and 404', async () => {
    const { handle } = recorded(async () => {
      throw new DependencyError('configuration', 'Secrets Manager unreachable');
    });

    const list = await handle(get('/v1/modules', 'limit=2'));
    const options = await handle({ ...get('/v1/modules'), method: 'OPTIONS' });
    const detail = await handle(get('/v1/modules/101'));
    const invalid = await handle(get('/v1/modules', 'limit=abc'));
    const unknownRoute = await handle(get('/v1/nope'));
    const optionsWithCursor = await handle({ ...get('/v1/modules', 'cursor=abc'), method: 'OPTIONS' });

    expect([list.status, codeOf(list)]).toEqual([503, 'configuration_error']);
    expect([options.status, detail.status, invalid.status, unknownRoute.status]).toEqual([
      204, 200, 400, 404,
    ]);
    // A cursor can only be checked with the secret.
    expect([optionsWithCursor.status, codeOf(optionsWithCursor)]).toEqual([503, 'configuration_error']);
  });

  it('starts the first request’s key lookup and pointer read while the secret is read, in today’s precedence', async () => {
    let release: (secret: string) => void = () => {};
    const { handle, events } = recorded(() => new Promise<string>((resolve) => (release = resolve)));

    const answer = handle(get('/v1/modules', 'limit=2'));
    await expect.poll(() => events.includes('read pointer') && events.includes('key lookup')).toBe(true);
    const startedBeforeTheSecret = [...events];
    release(SECRET_A);

    expect((await answer).status).toBe(200);
    expect(startedBeforeTheSecret).toEqual(['secret read', 'read pointer', 'key lookup']);
    // The pointer read begun early is the catalogue's: it is not read twice.
    expect(events.filter((event) => event === 'read pointer')).toHaveLength(1);
  });

  it('with the secret unreadable and the key unknown, a list is still 503 configuration_error (before 401)', async () => {
    const { handle } = recorded(async () => {
      throw new DependencyError('configuration', 'Secrets Manager unreachable');
    });

    const answer = await handle(get('/v1/modules', '', { authorization: `Bearer ${KEYS.unknown}` }));

    expect([answer.status, codeOf(answer)]).toEqual([503, 'configuration_error']);
  });

  it('logs a latency that includes the wait for the secret', async () => {
    const { handle, lines } = recorded(async () => {
      await later(60);
      return SECRET_A;
    });

    await handle({ ...get('/v1/modules', 'limit=2'), receivedAt: performance.now() });

    expect(lines).toHaveLength(1);
    expect(lines[0]!.latency_ms).toBeGreaterThanOrEqual(55);
  });

  it('a request that joins the read another one started logs the wait too, also when the caller gave no arrival time', async () => {
    let release: (secret: string) => void = () => {};
    const { handle, lines } = recorded(() => new Promise<string>((resolve) => (release = resolve)));

    const started = performance.now();
    const first = handle(get('/v1/modules', 'limit=2'));
    const joined = handle(get('/v1/modules', 'limit=3'));
    await later(60);
    const waited = performance.now() - started;
    release(SECRET_A);
    await Promise.all([first, joined]);

    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.latency_ms).toBeGreaterThanOrEqual(Math.floor(waited) - 1);
  });

  it('re-reads a due secret within the invocation: settle() waits for the read, the answer does not', async () => {
    let reads = 0;
    let release: (secret: string) => void = () => {};
    const { handle, clock } = recorded(() => {
      reads++;
      return reads === 1 ? Promise.resolve(SECRET_A) : new Promise<string>((resolve) => (release = resolve));
    });
    await handle(get('/v1/tags'));
    await handle.settle?.();

    clock.ms += 60_000;
    const due = await handle(get('/v1/tags'));
    let settled = false;
    const settling = handle.settle!().then(() => {
      settled = true;
    });
    await later(20);
    const settledBeforeTheRead = settled;
    release(SECRET_B);
    await settling;

    expect(due.status).toBe(200);
    expect(settledBeforeTheRead).toBe(false);
    expect(settled).toBe(true);
    expect(reads).toBe(2);
  });

  it('after a rotation, first pages carry cursors of the new secret (no answer composed with the old one)', async () => {
    let secret = SECRET_A;
    const { handle, clock } = recorded(async () => secret);
    const before = await handle(get('/v1/modules', 'limit=2'));

    secret = SECRET_B;
    clock.ms += 60_000;
    await handle(get('/v1/tags'));
    await handle.settle?.();
    const after = await handle(get('/v1/modules', 'limit=2'));
    const next = await handle(
      get('/v1/modules', `limit=2&cursor=${JSON.parse(after.body!.toString()).page.next_cursor}`),
    );

    expect(before.status).toBe(200);
    expect(JSON.parse(after.body!.toString()).page.next_cursor).not.toBe(
      JSON.parse(before.body!.toString()).page.next_cursor,
    );
    expect(next.status).toBe(200);
  });
});
