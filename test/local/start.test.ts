/**
 * The `npm start` contract (README, DESIGN.md "Local stack"): ready line with the URL, a free dev key (re-used
 * across restarts), CATALOGUE_DEV_KEYS seeded at once, restartable on the same state, quick clean shutdown on
 * SIGTERM; the local loop that keeps the publisher's work (a published edit survives a restart; the source is
 * published again only when the named source changed); a second start on a data directory in use refuses and
 * leaves the first serving; and at sizes past one S3 listing page (1,000 keys): a 2,000-module catalogue
 * restarts on the same data, and ten publishes into a running `npm start` all succeed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
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

/** Run `npm start` expecting it to exit by itself: its exit code, its output and how long it took. */
function runToExit(
  env: Record<string, string>,
): Promise<{ code: number | null; output: string; ms: number }> {
  const begun = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    env: { ...process.env, PORT: '0', CATALOGUE_LOCAL_DIR: local, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve({ code, output, ms: performance.now() - begun }));
  });
}

/** Every file under `directory` with its size and modification time, to show that nothing was touched. */
function snapshotOf(directory: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const { size, mtimeMs } = statSync(path);
    files.set(path, `${size}@${mtimeMs}`);
  }
  return files;
}

/** Publish `source` into a running start's bucket exactly as its printed hint line does. */
async function publishInto(started: Started, source: string): Promise<number> {
  const quiet = [
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true),
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true),
  ];
  try {
    return await catalogueCli([
      'build',
      '--source',
      source,
      '--out',
      's3://catalogue',
      '--endpoint',
      started.s3Endpoint,
    ]);
  } finally {
    for (const spy of quiet) spy.mockRestore();
  }
}

/** Rename module 101 in the snapshot at `source`. */
function renameModule(source: string, name: string): void {
  const file = join(source, 'modules.json');
  const modules = JSON.parse(readFileSync(file, 'utf8')) as { id: number; name: string }[];
  modules.find((module) => module.id === 101)!.name = name;
  writeFileSync(file, JSON.stringify(modules, null, 2));
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
    const printedKeys: string[] = [];
    for (let run = 0; run < 2; run++) {
      const started = await start();
      printedKeys.push(started.freshKey);
      try {
        expect(started.output()).toContain(`  export CATALOGUE_KEY=${started.freshKey}`);
        expect(started.output()).toMatch(
          run === 0
            ? /publishing fixtures\/catalogue to s3:\/\/catalogue\/: nothing is published/
            : /not publishing fixtures\/catalogue: serving what is published/,
        );
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
    // The dev key is re-used, not piled up.
    expect(printedKeys[1]).toBe(printedKeys[0]);
  }, 240_000);

  it('keeps a published edit across a restart on the same data directory', async () => {
    const source = temporaryDirectory('edited');
    cpSync(FIXTURE, source, { recursive: true });
    const first = await start();
    try {
      // Prepare: a publisher edits a copy and publishes it into the running stack.
      renameModule(source, 'A-110-1 (edited)');
      expect(await publishInto(first, source)).toBe(EXIT.ok);
    } finally {
      await stop(first);
    }

    // Act: start again on the same data directory, as a user would (no CATALOGUE_SOURCE).
    const again = await start();
    try {
      // Assess: the edit is served, and npm start says where the version came from.
      const module = await get(`${again.base}/modules/101`, again.freshKey);
      expect(JSON.parse(module.body).data.name).toBe('A-110-1 (edited)');
      expect(again.output()).toMatch(
        /Catalogue: version \S+, published by a publisher over what npm start published/,
      );
      expect(again.output()).not.toContain('rendering and uploading');
    } finally {
      await stop(again);
    }
  }, 240_000);

  it('publishes a named source again only when it changed since it was published there', async () => {
    const source = temporaryDirectory('named');
    cpSync(FIXTURE, source, { recursive: true });
    const env = { CATALOGUE_SOURCE: source, CATALOGUE_LOCAL_DIR: temporaryDirectory('named-local') };
    const names: string[] = [];
    for (const edit of [undefined, undefined, 'A-110-1 (named edit)']) {
      if (edit) renameModule(source, edit);
      const started = await start(env);
      try {
        const module = await get(`${started.base}/modules/101`, started.freshKey);
        names.push(JSON.parse(module.body).data.name);
        names.push(/^(publishing|already current)/m.exec(started.output())?.[1] ?? 'neither');
      } finally {
        await stop(started);
      }
    }
    expect(names).toEqual([
      'A-110-1',
      'publishing',
      'A-110-1',
      'already current',
      'A-110-1 (named edit)',
      'publishing',
    ]);
  }, 240_000);

  it('refuses a second start on a data directory in use, at once, touching nothing, and leaves the first serving', async () => {
    const first = await start();
    try {
      const before = snapshotOf(local);

      const second = await runToExit({});

      expect(second.code).not.toBe(0);
      expect(second.output).toContain(
        `npm start failed: the data directory ${local} is in use by another npm start`,
      );
      expect(second.output).toContain(`process ${first.child.pid}`);
      expect(second.output).not.toMatch(/publishing|ready at|Error: Database is closed| {4}at /);
      // Refused before any server started: well under the few seconds s3rver, dynalite and a publish take.
      expect(second.ms).toBeLessThan(15_000);
      expect(snapshotOf(local)).toEqual(before);
      expect((await get(`${first.base}/modules?limit=1`, first.freshKey)).status).toBe(200);
    } finally {
      await stop(first);
    }
  }, 240_000);

  it('takes over the lock of a start that died without releasing it', async () => {
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.once('exit', resolve));
    writeFileSync(
      join(local, 'npm-start.lock'),
      JSON.stringify({ pid: dead.pid, host: hostname(), since: '' }),
    );

    const started = await start();
    try {
      expect((await get(`${started.base}/tags`, started.freshKey)).status).toBe(200);
    } finally {
      await stop(started);
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
        // More than one listing page of objects is published (the first start wrote them; the second, whose
        // source is unchanged, only read the pointer).
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
