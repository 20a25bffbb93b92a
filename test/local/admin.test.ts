/**
 * The key-administration API as `npm start` serves it (local/admin.ts, @catalogue/local-aws sigv4.ts): the admin core behind
 * a SigV4 check, against dynalite, through real signed HTTP as a Node.js application sends it. Every action;
 * unsigned, expired, wrongly signed and tampered requests refused; the per-owner cap; Idempotency-Key under
 * concurrent calls; every input check; DynamoDB down → 503 with Retry-After; one audit line per call, never a
 * key. Every answer is checked against admin/openapi.json. Issue 36's findings (test/helpers/admin-findings.ts)
 * run against a second server, whose DynamoDB calls pass a fault proxy and whose clock the tests move; raw
 * sockets send what a client library would not: a Host sent twice or malformed, a request line Node cannot
 * read, a body over the limit on a kept-alive connection.
 */

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditLine } from '../../admin/http/handler.js';
import { type LocalAdmin, localAdminLines, startLocalAdmin } from '../../local/admin.js';
import { DynamoKeyStore } from '../../proxy/keys/dynamo.js';
import { DynamoQuotaMeter } from '../../proxy/quota/dynamo.js';
import { hashApiKey, keyAccepted } from '../../tables/keys.js';
import { describeAdminFindings } from '../helpers/admin-findings.js';
import { describeKeyBodies } from '../helpers/admin-key-bodies.js';
import { type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';
import { type FaultProxy, startFaultProxy } from '../helpers/fault-proxy.js';
import { closeServer } from '../helpers/loopback.js';
import { adminResponseValidator } from '../helpers/openapi.js';
import { type SignedAnswer, signedRequest } from '../helpers/signed.js';

let db: DynamoFixture;
let admin: LocalAdmin;
const audit: AuditLine[] = [];
const openapi = adminResponseValidator();
const directory = mkdtempSync(join(tmpdir(), 'cat-admin-'));

/** The second server: its DynamoDB calls through `faults`, its clock `clock.ms` from now on. */
let findings: LocalAdmin;
let faults: FaultProxy;
const findingsAudit: AuditLine[] = [];
const clock = { offset: 0 };

beforeAll(async () => {
  db = await dynamoFixture();
  faults = await startFaultProxy({ targetPort: db.server.port });
  const options = {
    dynamodbEndpoint: db.server.endpoint,
    keysTable: db.keysTable,
    countersTable: db.countersTable,
    directory,
    port: 0,
  };
  admin = await startLocalAdmin({
    ...options,
    env: { ADMIN_MAX_KEYS_PER_OWNER: '3', AWS_REGION: 'eu-west-1' },
    log: (line) => audit.push(line),
  });
  findings = await startLocalAdmin({
    ...options,
    env: { ADMIN_MAX_KEYS_PER_OWNER: '2', AWS_REGION: 'eu-west-1', ADMIN_DEADLINE_MS: '3000' },
    dynamodbEndpoint: faults.endpoint,
    log: (line) => findingsAudit.push(line),
    now: () => new Date(Date.now() + clock.offset),
  });
});
afterAll(async () => {
  await closeServer(admin?.server);
  await closeServer(findings?.server);
  await faults?.close();
  await db?.dispose();
  rmSync(directory, { recursive: true, force: true });
});

/** A signed call, its answer checked against the OpenAPI document. */
async function call(method: string, path: string, options: Parameters<typeof signedRequest>[3] = {}) {
  const answer = await signedRequest(admin, method, path, options);
  openapi.assert(answer);
  return answer;
}
const data = (answer: SignedAnswer) => answer.json.data;
let owners = 0;
const owner = () => `org:${process.pid}-${++owners}`;

describe('the local admin API: every action through signed HTTP', () => {
  it('issues, lists, reads, changes, rolls, revokes and reports usage', async () => {
    const who = owner();
    const issued = await call('POST', '/keys', {
      body: { owner: who, tier: 'partner', label: 'Acme app', limits: { minute: 120 } },
    });
    const key = data(issued).key as string;
    const keyId = data(issued).key_id as string;
    const store = new DynamoKeyStore({ transport: db.transport, table: db.keysTable });
    const meter = new DynamoQuotaMeter({ transport: db.transport, table: db.countersTable });
    await meter.meter((await store.lookup(hashApiKey(key)))!, new Date());

    const listed = await call('GET', `/keys?owner=${encodeURIComponent(who)}`);
    const read = await call('GET', `/keys/${keyId}`);
    const limits = await call('POST', `/keys/${keyId}/limits`, { body: { month: 2000 } });
    const expiry = await call('POST', `/keys/${keyId}/expiry`, {
      body: { expires: new Date(Date.now() + 86_400_000).toISOString() },
    });
    const cleared = await call('POST', `/keys/${keyId}/expiry`, { body: { expires: null } });
    const usage = await call('GET', `/keys/${keyId}/usage`);
    const rolled = await call('POST', `/keys/${keyId}/roll`, {
      body: { old_key_expires: new Date(Date.now() + 3_600_000).toISOString() },
    });
    const both = await call('GET', `/keys?owner=${encodeURIComponent(who)}`);
    const revoked = await call('POST', `/keys/${keyId}/revoke`);
    const enabled = await call('POST', `/keys/${keyId}/enable`, { body: {} });

    expect(issued.status).toBe(201);
    expect(data(issued)).toMatchObject({ owner: who, tier: 'partner', label: 'Acme app', replayed: false });
    expect(data(issued).limits).toEqual({ minute: 120, month: 1_000_000 });
    expect(key).toMatch(/^pk_live_[A-Za-z0-9_-]{22}$/);
    expect(issued.headers['x-request-id']).toBe(issued.json.request_id);
    expect(data(listed).map((k: { key_id: string }) => k.key_id)).toEqual([keyId]);
    expect(data(read)).toMatchObject({ key_id: keyId, last_used: expect.stringMatching(/Z$/) });
    expect(data(limits)).toMatchObject({
      limits: { minute: 120, month: 2000 },
      previous_limits: { month: 1_000_000 },
    });
    expect(data(expiry).expires).not.toBeNull();
    expect(data(cleared).expires).toBeNull();
    expect(data(usage)).toMatchObject({ key_id: keyId, month: { count: 1 }, minute: { count: 1 } });
    expect(data(usage).months[1].days.at(-1).count).toBe(1);
    expect(rolled.status).toBe(201);
    expect(data(rolled)).toMatchObject({
      owner: who,
      rolled_from: keyId,
      old_key: { key_id: keyId, rolled_to: data(rolled).key_id },
    });
    expect(data(rolled).key).toMatch(/^pk_live_/);
    expect(data(both)).toHaveLength(2);
    expect(data(revoked)).toMatchObject({ status: 'revoked', changed: true });
    expect(data(enabled)).toMatchObject({ status: 'active', changed: true });
    // Never a key or its hash outside the answers that issue one.
    for (const answer of [listed, read, limits, expiry, usage, both, revoked, enabled]) {
      expect(answer.body).not.toContain('pk_live_');
      expect(answer.body).not.toContain(hashApiKey(key));
    }
    expect(JSON.stringify(audit)).not.toContain('pk_live_');
    expect(audit.find((line) => line.request_id === issued.json.request_id)).toMatchObject({
      type: 'admin_audit',
      principal: 'arn:aws:iam::000000000000:user/local-admin',
      action: 'issue',
      key_id: keyId,
      owner: who,
      outcome: 'created',
      status: 201,
    });
    expect(audit.find((line) => line.request_id === rolled.json.request_id)).toMatchObject({
      action: 'roll',
      key_id: keyId,
      outcome: 'created',
    });
  });
});

describe('the local admin API: security', () => {
  it('refuses unsigned, expired, wrongly signed and tampered requests with the envelope, and audits them', async () => {
    const unsigned = await call('GET', `/keys?owner=x`, { sign: false });
    const expired = await call('GET', `/keys?owner=x`, { signingDate: new Date(Date.now() - 10 * 60_000) });
    const wrongSecret = await call('GET', `/keys?owner=x`, {
      credentials: {
        accessKeyId: admin.credentials.accessKeyId,
        secretAccessKey: 'not-the-secret-at-all-0000000000000000000',
      },
    });
    const otherKey = await call('GET', `/keys?owner=x`, {
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: admin.credentials.secretAccessKey },
    });
    const tampered = await call('POST', '/keys', {
      body: { owner: 'x', tier: 'free' },
      tamper: JSON.stringify({ owner: 'y', tier: 'free' }),
    });

    for (const answer of [unsigned, expired, wrongSecret, otherKey, tampered]) {
      expect(answer.status).toBe(403);
      expect(answer.json.error.code).toBe('forbidden');
    }
    expect(expired.json.error.message).toContain('Signature expired');
    expect(wrongSecret.json.error.message).toContain('does not match');
    const refusals = audit.filter((line) => line.status === 403);
    expect(refusals.length).toBeGreaterThanOrEqual(5);
    expect(refusals.every((line) => line.principal === null)).toBe(true);
  });

  it('keeps its credentials in the data directory, readable by its owner only, and prints them on a line with admin', () => {
    expect(statSync(join(directory, 'admin-credentials.json')).mode & 0o777).toBe(0o600);
    const lines = localAdminLines(admin);
    expect(lines[0]).toMatch(/admin.*http:\/\/127\.0\.0\.1:\d+\/v1/);
    expect(lines.join('\n')).toContain(admin.credentials.secretAccessKey);
  });
});

describe('the local admin API: retries, caps and mistakes', () => {
  it('creates one key for two concurrent issues with one Idempotency-Key, and answers the replay without the key', async () => {
    const who = owner();
    const headers = { 'idempotency-key': `signup-${who}` };
    const [a, b] = await Promise.all([
      call('POST', '/keys', { body: { owner: who, tier: 'free' }, headers }),
      call('POST', '/keys', { body: { owner: who, tier: 'free' }, headers }),
    ]);
    const again = await call('POST', '/keys', { body: { owner: who, tier: 'free' }, headers });
    const other = await call('POST', '/keys', { body: { owner: who, tier: 'partner' }, headers });
    const listed = await call('GET', `/keys?owner=${encodeURIComponent(who)}`);

    expect(new Set([data(a).key_id, data(b).key_id, data(again).key_id]).size).toBe(1);
    expect([data(a).key, data(b).key].filter(Boolean)).toHaveLength(1);
    expect(data(again)).toMatchObject({ key: null, replayed: true });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(other).toMatchObject({ status: 422, json: { error: { code: 'idempotency_key_reused' } } });
    expect(data(listed)).toHaveLength(1);
  });

  it('holds the per-owner cap (ADMIN_MAX_KEYS_PER_OWNER=3)', async () => {
    const who = owner();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => call('POST', '/keys', { body: { owner: who, tier: 'free' } })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 409, 409]);
    expect(answers.find((answer) => answer.status === 409)?.json.error.code).toBe('owner_key_limit_reached');
  });

  it.each([
    ['an owner with a space', { owner: 'user 42', tier: 'free' }, 'owner'],
    ['an owner too long', { owner: 'u'.repeat(129), tier: 'free' }, 'owner'],
    ['no owner', { tier: 'free' }, 'owner'],
    ['an unknown tier', { owner: 'u1', tier: 'gold' }, 'tier'],
    ['limits out of bounds', { owner: 'u1', tier: 'partner', limits: { minute: 60_001 } }, 'limits.minute'],
    ['limits on a free key', { owner: 'u1', tier: 'free', limits: { minute: 100 } }, 'limits'],
    ['an expiry in the past', { owner: 'u1', tier: 'free', expires: '2020-01-01T00:00:00Z' }, 'expires'],
    ['an expiry without its zone', { owner: 'u1', tier: 'free', expires: '2099-01-01T00:00:00' }, 'expires'],
    ['a label too long', { owner: 'u1', tier: 'free', label: 'x'.repeat(101) }, 'label'],
    ['an unknown field', { owner: 'u1', tier: 'free', colour: 'red' }, 'colour'],
  ])('answers %s with 400 invalid_request naming the field', async (_, body, field) => {
    const answer = await call('POST', '/keys', { body });
    expect(answer.status).toBe(400);
    expect(answer.json.error.code).toBe('invalid_request');
    expect(answer.json.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('answers a body too large, not JSON, of another type, an unknown route or method, and an unknown key', async () => {
    const large = await call('POST', '/keys', {
      raw: JSON.stringify({ owner: 'u1', tier: 'free', label: 'x'.repeat(20_000) }),
    });
    const notJson = await call('POST', '/keys', { raw: '{"owner":' });
    const text = await call('POST', '/keys', { raw: 'owner=u1', headers: { 'content-type': 'text/plain' } });
    const route = await call('GET', '/nope');
    const method = await call('DELETE', '/keys/key_AAAAAAAAAA');
    const unknown = await call('GET', '/keys/key_AAAAAAAAAA');
    const badId = await call('GET', '/keys/%E0%A4%A');
    const badQuery = await call('GET', '/keys?owner=u1&limit=0&colour=red');

    expect(
      [large, notJson, text, route, method, unknown, badId, badQuery].map((a) => [
        a.status,
        a.json.error.code,
      ]),
    ).toEqual([
      [413, 'payload_too_large'],
      [400, 'invalid_request'],
      [415, 'unsupported_media_type'],
      [404, 'not_found'],
      [405, 'method_not_allowed'],
      [404, 'key_not_found'],
      [400, 'invalid_request'],
      [400, 'invalid_request'],
    ]);
    expect(method.headers.allow).toBe('GET');
  });

  it('answers 503 with Retry-After while DynamoDB is down, and recovers', async () => {
    await db.server.stop();
    let down: SignedAnswer;
    try {
      down = await call('POST', '/keys', { body: { owner: owner(), tier: 'free' } });
    } finally {
      await db.server.start();
    }
    const after = await call('POST', '/keys', { body: { owner: owner(), tier: 'free' } });

    expect(down.status).toBe(503);
    expect(down.json.error.code).toBe('service_unavailable');
    expect(Number(down.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(after.status).toBe(201);
    expect(
      keyAccepted({ ...data(after), keyHash: '', keyId: data(after).key_id, status: 'active' }, Date.now()),
    ).toBe(true);
  });
});

describeAdminFindings(
  'the local admin API',
  () => ({
    call: (method, target, options = {}) => signedRequest(findings, method, target, options),
    audit: findingsAudit,
    faults,
    cap: 2,
    advance: (ms) => {
      clock.offset += ms;
    },
  }),
  { clock: true },
);
describeKeyBodies('the local admin API', () => ({
  call: (method, target, options = {}) => signedRequest(findings, method, target, options),
  audit: findingsAudit,
  faults,
  cap: 2,
}));

/** Write `bytes` on a fresh connection: what comes back, and whether the server closed the connection. */
function exchange(bytes: string): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port: Number(new URL(findings.url).port), host: '127.0.0.1' });
    let text = '';
    let closed = false;
    const done = setTimeout(() => socket.destroy(), 1_500);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('end', () => {
      closed = true;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(done);
      resolve({ text, closed });
    });
    socket.write(bytes);
  });
}

/** The first answer of a raw exchange: status, lower-case headers and the JSON body. */
function firstAnswer(text: string) {
  const [head = '', rest = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  const length = Number(headers['content-length'] ?? 0);
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    json: JSON.parse(rest.slice(0, length) || 'null'),
  };
}

describe('the local admin API: what only a raw socket sends', () => {
  it.each([
    ['a Host sent twice', 'Host: 127.0.0.1\r\nHost: evil.example\r\n', 'Host', 'must be sent once'],
    ['a malformed Host', 'Host: a b\r\n', 'Host', 'must be a host name or address, with an optional port'],
    ['a malformed escape', 'Host: 127.0.0.1\r\n', 'query', 'holds a malformed percent-escape'],
  ])(
    'answers %s with 400 in the envelope, audited, and keeps serving',
    async (_, hostLines, field, problem) => {
      const query = field === 'query' ? 'owner=%zz' : 'owner=u1';
      const { text } = await exchange(
        `GET /v1/keys?${query} HTTP/1.1\r\n${hostLines}Connection: close\r\n\r\n`,
      );
      const answer = firstAnswer(text);

      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({ code: 'invalid_request', details: [{ field, problem }] });
      expect(findingsAudit.find((line) => line.request_id === answer.json.error.request_id)).toMatchObject({
        status: 400,
      });
      expect((await signedRequest(findings, 'GET', '/keys?owner=u1')).status).toBe(200);
    },
  );

  it('answers a request line Node cannot read in the envelope, audited, and closes', async () => {
    const { text, closed } = await exchange('GET /v1/keys HTTP/1.1 extra\r\nHost: 127.0.0.1\r\n\r\n');
    const answer = firstAnswer(text);

    expect(answer.status).toBe(400);
    expect(answer.headers.connection).toBe('close');
    expect(answer.json.error.code).toBe('invalid_request');
    expect(findingsAudit.find((line) => line.request_id === answer.json.error.request_id)).toMatchObject({
      status: 400,
    });
    expect(closed).toBe(true);
  });

  it('answers a body over the limit with 413 and Connection: close, and closes the connection', async () => {
    const body = 'x'.repeat(20_000);
    const { text, closed } = await exchange(
      `POST /v1/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`,
    );
    const answer = firstAnswer(text);

    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(answer.json.error.code).toBe('payload_too_large');
    expect(closed).toBe(true);
  });
});
