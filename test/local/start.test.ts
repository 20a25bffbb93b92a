/**
 * The `npm start` contract (README, DESIGN.md "Local stack"): ready line with the URL, a fresh free key,
 * CATALOGUE_DEV_KEYS seeded at once, restartable on the same state, quick clean shutdown on SIGTERM; and at
 * sizes past one S3 listing page (1,000 keys): a 2,000-module catalogue restarts on the same data, and ten
 * publishes into a running `npm start` all succeed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { s3Client } from '../../aws/sdk.js';
import { main as catalogueCli, EXIT } from '../../builder/cli.js';
import { generateSnapshot, writeSnapshot } from '../../builder/synthetic/generate.js';
import { parseDevKeys } from '../../local/dev-keys.js';
import { S3ObjectStore } from '../../store/objects/s3.js';

const FREE = 'pk_live_AAAAAAAAAAAAAAAAAAAAAA';
const PARTNER = 'pk_live_BBBBBBBBBBBBBBBBBBBBBB';
const FIXTURE = join(import.meta.dirname, '../../fixtures/catalogue');
const temporary: string[] = [];
const temporaryDirectory = (label: string) => {
  const directory = mkdtempSync(join(tmpdir(), `cat-${label}-`));
  temporary.push(directory);
  return directory;
};
const local = temporaryDirectory('start');

interface Started {
  child: ChildProcess;
  base: string;
  freshKey: string;
  /** The endpoint of its own S3 server, from the ready lines. */
  s3Endpoint: string;
  output: () => string;
}

function start(env: Record<string, string> = {}, readyWithinMs = 120_000): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    env: {
      ...process.env,
      PORT: '0',
      CATALOGUE_LOCAL_DIR: local,
      CATALOGUE_DEV_KEYS: `free:${FREE},partner:${PARTNER}`,
      ...env,
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
    const timer = setTimeout(() => reject(new Error(`not ready in time:\n${out}`)), readyWithinMs);
    const poll = setInterval(() => {
      const url = /http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(out);
      const key = /dev key \([^)]+\): (pk_live_[A-Za-z0-9_-]{22})/.exec(out);
      const s3 = /Local S3: (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (url && key && out.includes('curl')) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve({ child, base: url[0], freshKey: key[1]!, s3Endpoint: s3?.[1] ?? '', output: () => out });
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

afterAll(() => {
  for (const directory of temporary) rmSync(directory, { recursive: true, force: true });
});

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

/** Keys under `prefix` in the bucket, through the same S3 object store (and its paging) the publisher uses. */
async function countKeys(endpoint: string, prefix: string): Promise<number> {
  const client = s3Client({ endpoint });
  try {
    let keys = 0;
    for await (const _ of new S3ObjectStore({ client, bucket: 'catalogue' }).list(prefix)) keys++;
    return keys;
  } finally {
    client.destroy();
  }
}

describe('npm start past one listing page (1,000 keys)', () => {
  it('starts, stops and starts again on the same data with a 2,000-module catalogue', async () => {
    const source = temporaryDirectory('source-2000');
    await writeSnapshot(source, generateSnapshot({ modules: 2000, seed: 1 }));
    const env = { CATALOGUE_SOURCE: source, CATALOGUE_LOCAL_DIR: temporaryDirectory('start-2000') };
    const timings: number[] = [];

    for (let run = 0; run < 2; run++) {
      const begun = performance.now();
      const started = await start(env, 240_000);
      timings.push(Math.round(performance.now() - begun));
      try {
        const modules = await get(`${started.base}/modules?limit=3`, PARTNER);
        expect(modules.status).toBe(200);
        expect(JSON.parse(modules.body).data).toHaveLength(3);
        // stderr is a pipe here, so the progress comes as lines, not a bar.
        if (run === 0) expect(started.output()).toMatch(/rendering and uploading: [\d,]+ to do…/);
        else expect(started.output()).toMatch(/already current: \S+ to s3:\/\/catalogue\/: 0 objects added/);
        // The second start listed (and read) more than one page of objects.
        expect(await countKeys(started.s3Endpoint, 'o/')).toBeGreaterThan(1000);
      } finally {
        await stop(started);
      }
    }
    // Not asserted (timing): reported for the README and the issue.
    console.info(`npm start with 2,000 modules: first start ${timings[0]} ms, second ${timings[1]} ms`);
  }, 480_000);

  it('serves each of ten one-module publishes of the fixture into a running npm start', async () => {
    const source = temporaryDirectory('source-edits');
    cpSync(FIXTURE, source, { recursive: true });
    const started = await start({
      CATALOGUE_SOURCE: source,
      CATALOGUE_LOCAL_DIR: temporaryDirectory('start-edits'),
    });
    const modulesFile = join(source, 'modules.json');
    const quiet = [
      vi.spyOn(process.stdout, 'write').mockImplementation(() => true),
      vi.spyOn(process.stderr, 'write').mockImplementation(() => true),
    ];
    try {
      for (let edit = 1; edit <= 10; edit++) {
        const modules = JSON.parse(readFileSync(modulesFile, 'utf8')) as { id: number; name: string }[];
        modules[0]!.name = `A-110-1 edit ${edit}`;
        writeFileSync(modulesFile, JSON.stringify(modules));

        const code = await catalogueCli([
          'build',
          '--source',
          source,
          '--out',
          's3://catalogue',
          '--endpoint',
          started.s3Endpoint,
        ]);

        expect(code, `publish ${edit}`).toBe(EXIT.ok);
        // The running proxy re-reads the pointer within POINTER_TTL_MS (1 s locally).
        await vi.waitFor(
          async () => {
            const module = await get(`${started.base}/modules/${modules[0]!.id}`, PARTNER);
            expect(JSON.parse(module.body).data.name).toBe(`A-110-1 edit ${edit}`);
          },
          { timeout: 15_000, interval: 250 },
        );
      }
      // Ten versions within the retention: more objects than one listing page holds.
      expect(await countKeys(started.s3Endpoint, 'o/')).toBeGreaterThan(1000);
    } finally {
      for (const spy of quiet) spy.mockRestore();
      await stop(started);
    }
  }, 300_000);
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
