/**
 * `npm run keys -- id --key-stdin` and `revoke --key-stdin` (admin/cli.ts): the key read from standard input,
 * never from the command line; the key id printed, the key revoked with what every proxy container does and
 * by when; a key on the command line refused unsaid; the key in no output. As an operator runs it (npm, a
 * pipe) and in process.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../admin/cli.js';
import { issueKey } from '../helpers/admin.js';
import { type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';

const root = join(import.meta.dirname, '..', '..');
let db: DynamoFixture;
beforeAll(async () => {
  db = await dynamoFixture();
});
afterAll(async () => {
  await db?.dispose();
});

const environment = () => ({
  KEYS_TABLE: db.keysTable,
  COUNTERS_TABLE: db.countersTable,
  DYNAMODB_ENDPOINT: db.server.endpoint,
  AWS_REGION: 'us-east-1',
});

async function keys(args: string[], stdin: string | undefined, now = new Date()) {
  let stdout = '';
  let stderr = '';
  const input = new PassThrough();
  if (stdin !== undefined) input.end(stdin);
  else input.end();
  const code = await main(
    args,
    environment(),
    { out: (text) => (stdout += `${text}\n`), err: (text) => (stderr += `${text}\n`), input },
    now,
  );
  return { code, stdout, stderr };
}

describe('a key from standard input', () => {
  it('id prints its key id and record; revoke revokes it, refused at once by every container', async () => {
    const { key, record } = await issueKey(db, { tier: 'partner', owner: 'stdin-1', label: 'leaked' });
    const now = new Date('2026-11-24T15:31:40Z');

    const id = await keys(['id', '--key-stdin'], `${key}\n`, now);
    const json = await keys(['id', '--key-stdin', '--json'], key, now);
    const revoked = await keys(['revoke', '--key-stdin'], `${key}\n`, now);
    const again = await keys(['revoke', '--key-stdin', '--json'], key, now);

    expect(id).toMatchObject({ code: 0, stderr: '' });
    expect(id.stdout).toMatch(new RegExp(`^key_id: +${record.keyId}$`, 'm'));
    expect(id.stdout).toMatch(/^owner: +stdin-1$/m);
    expect(JSON.parse(json.stdout)).toMatchObject({
      key_id: record.keyId,
      status: 'active',
      label: 'leaked',
    });
    expect(revoked.stdout).toBe(
      `${record.keyId} revoked: refused (401 invalid_key) by every proxy container at once, from 2026-11-24T15:31:40Z: ` +
        'its counters are stopped until 2026-11-24T16:32:40Z, and every key cache drops it within 30 s, by 2026-11-24T15:32:10Z (KEY_CACHE_TTL_MS)\n',
    );
    expect(JSON.parse(again.stdout)).toEqual({
      key_id: record.keyId,
      status: 'revoked',
      already_revoked: true,
      refused_by: '2026-11-24T15:31:40Z',
      stopped_until: '2026-11-24T16:32:40Z',
      cache_refuses_by: '2026-11-24T15:32:10Z',
    });
    for (const run of [id, json, revoked, again]) expect(run.stdout + run.stderr).not.toContain(key.slice(8));
  });

  it("issue --like: a replacement with the revoked key's tier, limits, owner and label, within the cap", async () => {
    const { key, record } = await issueKey(db, {
      tier: 'partner',
      owner: 'stdin-2',
      label: 'nightly sync',
      limits: { minute: 1200, month: 2_000_000 },
    });
    await keys(['revoke', '--key-stdin'], key);

    const replaced = await keys(['issue', '--like', record.keyId, '--json'], undefined);
    const relabelled = await keys(
      ['issue', '--like', record.keyId, '--label', 'new laptop', '--json'],
      undefined,
    );
    const mixed = await keys(['issue', '--like', record.keyId, '--tier', 'free'], undefined);
    const keyed = await keys(['issue', '--like', key], undefined);
    const unknown = await keys(['issue', '--like', 'key_nosuchkey0'], undefined);

    expect(JSON.parse(replaced.stdout)).toMatchObject({
      key: expect.stringMatching(/^pk_live_/),
      owner: 'stdin-2',
      tier: 'partner',
      limits: { minute: 1200, month: 2_000_000 },
      label: 'nightly sync',
      status: 'active',
    });
    expect(JSON.parse(replaced.stdout).key_id).not.toBe(record.keyId);
    expect(JSON.parse(relabelled.stdout).label).toBe('new laptop');
    expect(mixed).toMatchObject({ code: 2, stderr: expect.stringContaining('give no --tier') });
    expect(keyed).toMatchObject({ code: 2 });
    expect(keyed.stderr).not.toContain(key.slice(8));
    expect(unknown).toMatchObject({ code: 1, stderr: 'no key with id key_nosuchkey0\n' });
  });

  it('refuses a key on the command line, a key of nothing, and no key at all, never showing it', async () => {
    const key = `pk_live_${randomBytes(17).toString('base64url').slice(0, 22)}`;

    const onArgv = await keys(['revoke', key], undefined);
    const idArgv = await keys(['id', key], undefined);
    const both = await keys(['revoke', 'key_abcdefghij', '--key-stdin'], key);
    const noFlag = await keys(['id'], key);
    const unknown = await keys(['id', '--key-stdin'], key);
    const notAKey = await keys(['revoke', '--key-stdin'], `${key.slice(0, -1)}\n`);
    const empty = await keys(['id', '--key-stdin'], '');

    expect(onArgv).toMatchObject({ code: 2, stderr: expect.stringContaining('with --key-stdin') });
    expect(idArgv).toMatchObject({ code: 2, stderr: expect.stringContaining('with --key-stdin') });
    expect(both).toMatchObject({ code: 2, stderr: expect.stringContaining('give no key id with it') });
    expect(noFlag).toMatchObject({ code: 2, stderr: expect.stringContaining('id --key-stdin') });
    expect(unknown).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('never issued or imported here'),
    });
    expect(notAKey).toMatchObject({ code: 2, stderr: expect.stringContaining('must hold one key') });
    expect(empty).toMatchObject({ code: 2, stderr: expect.stringContaining('holds no key') });
    for (const run of [onArgv, idArgv, both, noFlag, unknown, notAKey, empty])
      expect(run.stdout + run.stderr).not.toContain(key.slice(8, 20));
  });

  it('as an operator runs it: npm run keys, the key piped in, not in the command', async () => {
    const { key, record } = await issueKey(db, { tier: 'free' });
    const child = execFile('npm', ['run', '--silent', 'keys', '--', 'revoke', '--key-stdin'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...environment() },
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => (stdout += chunk));
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    child.stdin?.end(`${key}\n`);
    const code = await new Promise((resolve) => child.once('exit', resolve));

    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(`^${record.keyId} revoked: refused \\(401 invalid_key\\) by every proxy container at once`),
    );
    expect(stdout + stderr).not.toContain(key.slice(8));
    expect(child.spawnargs.join(' ')).not.toContain(key.slice(8));
  }, 60_000);
});
