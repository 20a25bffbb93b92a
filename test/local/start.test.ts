/**
 * The `npm start` contract (README, DESIGN.md "Local stack"): ready line with the URL, a fresh free key,
 * CATALOGUE_DEV_KEYS seeded at once, restartable on the same state, quick clean shutdown on SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDevKeys } from '../../proxy/local/dev-keys.js';

const FREE = 'pk_live_AAAAAAAAAAAAAAAAAAAAAA';
const PARTNER = 'pk_live_BBBBBBBBBBBBBBBBBBBBBB';
const local = mkdtempSync(join(tmpdir(), 'cat-start-'));

interface Started {
  child: ChildProcess;
  base: string;
  freshKey: string;
  output: () => string;
}

function start(): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'proxy/local/start.ts'], {
    env: {
      ...process.env,
      PORT: '0',
      CATALOGUE_LOCAL_DIR: local,
      CATALOGUE_DEV_KEYS: `free:${FREE},partner:${PARTNER}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    out += chunk;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in time:\n${out}`)), 120_000);
    const poll = setInterval(() => {
      const url = /http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(out);
      const key = /dev key \([^)]+\): (pk_live_[A-Za-z0-9_-]{22})/.exec(out);
      if (url && key && out.includes('curl')) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve({ child, base: url[0], freshKey: key[1]!, output: () => out });
      }
    }, 100);
    child.once('exit', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${out}`));
    });
  });
}

async function stop(started: Started): Promise<number> {
  const begun = performance.now();
  const exited = new Promise((resolve) => started.child.once('exit', resolve));
  started.child.kill('SIGTERM');
  await exited;
  return performance.now() - begun;
}

async function get(url: string, key: string) {
  const response = await request(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.statusCode, body: await response.body.text() };
}

afterAll(() => rmSync(local, { recursive: true, force: true }));

describe('npm start', () => {
  it('serves the fixture with the printed key and the seeded keys, twice on the same state', async () => {
    for (let run = 0; run < 2; run++) {
      const started = await start();
      try {
        expect(started.output()).toContain(`curl -s -H "Authorization: Bearer ${started.freshKey}"`);
        expect(started.output()).toMatch(
          /^ {2}KEYS_TABLE=\S+ COUNTERS_TABLE=\S+ DYNAMODB_ENDPOINT=http:\/\/127\.0\.0\.1:\d+ npm run keys -- list$/m,
        );
        expect(started.output()).toMatch(
          /^ {2}npm run catalogue -- build --source \S+ --out s3:\/\/catalogue --endpoint http:\/\/127\.0\.0\.1:\d+$/m,
        );
        expect(started.output()).not.toContain('NodeVersionSupportWarning');
        const modules = await get(`${started.base}/modules`, started.freshKey);
        expect(modules.status).toBe(200);
        expect(JSON.parse(modules.body).data).toHaveLength(50);
        expect((await get(`${started.base}/tags`, FREE)).status).toBe(200);
        expect((await get(`${started.base}/standards`, PARTNER)).status).toBe(200);
        expect((await get(`${started.base}/standards`, 'pk_live_CCCCCCCCCCCCCCCCCCCCCC')).status).toBe(401);
      } finally {
        expect(await stop(started)).toBeLessThan(5_000);
      }
    }
  }, 240_000);
});

describe('CATALOGUE_DEV_KEYS', () => {
  it('parses any number of tier:key entries', () => {
    expect(parseDevKeys(undefined)).toEqual([]);
    expect(parseDevKeys(` free:${FREE} , partner:${PARTNER}`)).toEqual([
      { tier: 'free', key: FREE },
      { tier: 'partner', key: PARTNER },
    ]);
  });

  it('refuses a malformed entry without echoing it', () => {
    expect(() => parseDevKeys('gold:pk_live_AAAAAAAAAAAAAAAAAAAAAA')).toThrow(/free:<key> or partner:<key>/);
    expect(() => parseDevKeys('free:pk_live_short')).not.toThrow(/pk_live_short/);
  });
});
