/**
 * The `npm start` contract (README, docs/design.md#the-local-stacks-contract): ready line with the URL, a free dev key (re-used
 * across restarts), CATALOGUE_DEV_KEYS seeded at once, restartable on the same state, quick clean shutdown on
 * SIGTERM; and at sizes past one S3 listing page (1,000 keys): a 2,000-module catalogue restarts on the same
 * data, and ten publishes into a running `npm start` all succeed. The local loop that keeps the publisher's
 * work is in start.loop.test.ts (a file of its own, so the two run side by side).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { s3Client } from '../../aws/sdk.js';
import { EXIT } from '../../builder/cli.js';
import { generateSnapshot, writeSnapshot } from '../../builder/synthetic/generate.js';
import { parseDevKeys } from '../../local/dev-keys.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { FREE, get, npmStartSuite, PARTNER, publishInto, stop } from '../helpers/npm-start.js';

const FIXTURE = join(import.meta.dirname, '../../fixtures/catalogue');
// Removing the 2,000-module data directory (~26,000 files) took 62 s on this machine under other work.
const { directory: temporaryDirectory, start } = npmStartSuite('start', { cleanupMs: 300_000 });

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
        expect(started.output()).toMatch(/^Keys \([a-z, -]+\): npm run keys -- list$/m);
        expect(started.output()).toContain('npm run catalogue -- versions | rollback');
        expect(started.output()).toMatch(
          /^ {2}npm run catalogue -- build --source \S+ --out s3:\/\/catalogue --endpoint http:\/\/127\.0\.0\.1:\d+$/m,
        );
        expect(started.output()).not.toContain('NodeVersionSupportWarning');
        expect(started.output()).toContain(
          'Partner-tier key(s) from CATALOGUE_DEV_KEYS: 600/minute and 1000000/month each.',
        );
        const modules = await get(`${started.base}/modules`, started.freshKey);
        expect(modules.status).toBe(200);
        expect(JSON.parse(modules.body).data).toHaveLength(50);
        // Idle connections are held longer than clients keep them (proxy/adapters/http.ts).
        const docs = await request(`${started.base.replace(/\/v1$/, '')}/docs`);
        await docs.body.dump();
        expect(docs.headers['keep-alive']).toBe('timeout=60');
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
    try {
      for (let edit = 1; edit <= 10; edit++) {
        const modules = JSON.parse(readFileSync(modulesFile, 'utf8')) as { id: number; name: string }[];
        modules[0]!.name = `A-110-1 edit ${edit}`;
        writeFileSync(modulesFile, JSON.stringify(modules));

        const code = await publishInto(started, source);

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
