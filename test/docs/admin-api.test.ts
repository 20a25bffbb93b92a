/**
 * The guide "Give your users keys" (docs/admin-api.md) against a real `npm start`: its ready line names the
 * admin API's URL (a line with `admin`) and the local credentials; a Python script signing with Debian's
 * python3-botocore (SigV4Auth) issues, lists, rolls and revokes a key; the guide's curl line (`--aws-sigv4`)
 * lists the owner's keys; an unsigned request is refused.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Started, startNpm, stop } from '../helpers/npm-start.js';

const ROOT = join(import.meta.dirname, '..', '..');
const PYTHON = '/usr/bin/python3';
const local = mkdtempSync(join(tmpdir(), 'cat-admin-guide-'));
let started: Started;

beforeAll(async () => {
  started = await startNpm(local);
}, 180_000);
afterAll(async () => {
  if (started) await stop(started);
  rmSync(local, { recursive: true, force: true });
});

describe('npm start serves the key-administration API', () => {
  it('prints its URL on a line with the word admin, and the local credentials that sign requests to it', () => {
    const line = started
      .output()
      .split('\n')
      .find((text) => /admin/.test(text) && /http:\/\/127\.0\.0\.1:\d+\/v1/.test(text));
    expect(line).toBeDefined();
    expect(started.exports).toMatchObject({
      CATALOGUE_ADMIN_URL: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1$/),
      CATALOGUE_ADMIN_ACCESS_KEY_ID: expect.stringMatching(/^LOCAL/),
      CATALOGUE_ADMIN_SECRET_ACCESS_KEY: expect.any(String),
      CATALOGUE_ADMIN_REGION: expect.any(String),
    });
  });

  it('a Python script signing with botocore issues, lists, rolls and revokes a key', async () => {
    const { stdout } = await promisify(execFile)(PYTHON, ['docs/examples/admin_client.py', 'py-user-1'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...started.exports },
      timeout: 60_000,
    });
    const calls = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));

    expect(calls.map((call) => [call.call, call.status])).toEqual([
      ['issue', 201],
      ['list', 200],
      ['roll', 201],
      ['revoke', 200],
    ]);
    const [issued, listed, rolled, revoked] = calls;
    expect(issued.key).toMatch(/^pk_live_[A-Za-z0-9_-]{22}$/);
    expect(listed.key_ids).toEqual([issued.key_id]);
    expect(rolled.key).toMatch(/^pk_live_/);
    expect(rolled.key_id).not.toBe(issued.key_id);
    expect(revoked).toMatchObject({ key_id: issued.key_id, status_now: 'revoked' });
    // The issued key works on the public API until it is revoked (within the key cache's bound).
    const response = await fetch(`${started.base}/standards`, {
      headers: { authorization: `Bearer ${rolled.key}` },
    });
    expect(response.status).toBe(200);
  });

  it("the guide's curl --aws-sigv4 line lists an owner's keys; an unsigned request is refused", async () => {
    const exported = started.exports;
    const signed = await promisify(execFile)(
      'curl',
      [
        '-s',
        '--aws-sigv4',
        `aws:amz:${exported.CATALOGUE_ADMIN_REGION}:lambda`,
        '--user',
        `${exported.CATALOGUE_ADMIN_ACCESS_KEY_ID}:${exported.CATALOGUE_ADMIN_SECRET_ACCESS_KEY}`,
        `${exported.CATALOGUE_ADMIN_URL}/keys?owner=py-user-1`,
      ],
      { timeout: 20_000 },
    );
    const unsigned = await fetch(`${exported.CATALOGUE_ADMIN_URL}/keys?owner=py-user-1`);

    expect(JSON.parse(signed.stdout).data).toHaveLength(2);
    expect(unsigned.status).toBe(403);
    expect(((await unsigned.json()) as { error: { code: string } }).error.code).toBe('forbidden');
  });
});
