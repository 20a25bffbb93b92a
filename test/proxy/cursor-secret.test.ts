/**
 * The cursor secret from Secrets Manager (proxy/cursor-secret.ts): read at cold start through Powertools'
 * parameters utility against a local server speaking the Secrets Manager protocol, 503
 * configuration_error (after 405 and 401) while it cannot be read, retried by a later request, re-read when
 * it is older than its bound, and never in the configuration.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxy } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import type { ProxyHandler, ProxyRequest, ProxyResponse } from '../../proxy/core/types.js';
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

describe('secretReader (Powertools) against a local Secrets Manager', () => {
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
