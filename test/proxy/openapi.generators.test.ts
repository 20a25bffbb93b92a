/**
 * The OpenAPI document as the common TypeScript generators consume it, unedited: from the document `npm start`
 * serves at /docs/openapi.json, clients are made with openapi-typescript + openapi-fetch, @hey-api/openapi-ts
 * (its default fetch client), Orval's default client (axios functions) and Orval's fetch client; each compiles
 * under strict TypeScript as generated, and walks the module list with two fields and an include along its
 * cursors, reads a module detail with two includes and a manufacturer detail with its include. Each sends the
 * list-valued parameters its own way — `fields=name&fields=hp` (openapi-fetch), `fields=name,hp` (hey-api,
 * following the document's `explode: false`), `fields[]=name&fields[]=hp` (axios), `fields=name%2Chp` (Orval's
 * fetch) — and every answer is the one the API gives the canonical comma list: the same body and the same ETag,
 * with the client's own cursors.
 *
 * The generators are a package of their own, test/generators (they need Node.js 22.18 or newer, while the
 * repository installs on a stock Node.js 20), installed here with `npm ci` when its lockfile changed since the
 * last install (a first run downloads them from the npm registry: see README.md, "Two commands"). They generate
 * with no network.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODULE_ID, PAGE_SIZE, type Sent, type WalkReport } from '../generators/walks/report.js';
import { npmStartSuite, PARTNER, type Started, stop } from '../helpers/npm-start.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const GENERATORS = join(ROOT, 'test/generators');
const WALKS = join(GENERATORS, 'walks');
const INSTALLED_STAMP = join(GENERATORS, 'node_modules/.installed-lock-sha256');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const TSX = join(ROOT, 'node_modules/tsx/dist/cli.mjs');
/** Every child runs on this test's Node.js (the generators' scripts start with `#!/usr/bin/env node`). */
const ENV = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };

interface Client {
  name: string;
  /** The generator's command lines (bin name and arguments), run in the client's folder. */
  generate: (document: string, base: string, folder: string) => [string, string[]][];
  /** How it sends `fields` and `include` on the first page of the list. */
  sends: string;
}

const CLIENTS: Client[] = [
  {
    name: 'openapi-fetch',
    generate: (document) => [['openapi-typescript', [document, '--output', 'schema.d.ts']]],
    sends: '/v1/modules?fields=name&fields=hp&include=tags&limit=70',
  },
  {
    name: 'hey-api',
    generate: (document) => [['openapi-ts', ['--input', document, '--output', '.']]],
    sends: '/v1/modules?fields=name,hp&include=tags&limit=70',
  },
  {
    name: 'orval-axios',
    generate: (document) => [['orval', ['--input', document, '--output', 'api.ts']]],
    sends: '/v1/modules?fields%5B%5D=name&fields%5B%5D=hp&include%5B%5D=tags&limit=70',
  },
  {
    name: 'orval-fetch',
    // Orval's fetch functions fetch a path: the base URL is Orval's `baseUrl` setting, in its config file.
    generate: (document, base, folder) => {
      const config = {
        fetch: { input: document, output: { target: 'api.ts', client: 'fetch', baseUrl: base } },
      };
      writeFileSync(join(folder, 'orval.config.mjs'), `export default ${JSON.stringify(config)};\n`);
      return [['orval', ['--config', 'orval.config.mjs']]];
    },
    sends: '/v1/modules?fields=name%2Chp&include=tags&limit=70',
  },
];

/** `npm ci` in test/generators, unless its node_modules was installed from the same lockfile. */
async function installGenerators(): Promise<void> {
  const lock = createHash('sha256')
    .update(readFileSync(join(GENERATORS, 'package-lock.json')))
    .digest('hex');
  if (existsSync(INSTALLED_STAMP) && readFileSync(INSTALLED_STAMP, 'utf8') === lock) return;
  try {
    await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: GENERATORS, env: ENV, timeout: 300_000 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(
      `npm ci in test/generators (the npm registry must be reachable once): ${stderr ?? error}`,
    );
  }
  writeFileSync(INSTALLED_STAMP, lock);
}

const suite = npmStartSuite('generators', { published: true });
const work = suite.directory('generated');
let started: Started;
let base: string;

beforeAll(async () => {
  const [stack] = await Promise.all([suite.start(), installGenerators()]);
  started = stack;
  base = started.base;
  const served = await request(`${base.replace(/\/v1$/, '')}/docs/openapi.json`);
  expect(served.statusCode).toBe(200);
  writeFileSync(join(work, 'openapi.json'), await served.body.text());
  // A consumer's ES module project, with the generators' packages (openapi-fetch, axios) installed.
  writeFileSync(join(work, 'package.json'), '{ "private": true, "type": "module" }\n');
  symlinkSync(join(GENERATORS, 'node_modules'), join(work, 'node_modules'), 'dir');
}, 300_000);

afterAll(async () => {
  if (started) await stop(started);
});

/** A generator's command, run from its client's folder on this test's Node.js. */
async function generate(client: Client): Promise<void> {
  const folder = join(work, client.name);
  mkdirSync(folder, { recursive: true });
  for (const [bin, args] of client.generate('../openapi.json', base, folder)) {
    await run(join(GENERATORS, 'node_modules/.bin', bin), args, { cwd: folder, env: ENV, timeout: 120_000 });
  }
  for (const file of ['report.ts', `${client.name}.ts`]) copyFileSync(join(WALKS, file), join(folder, file));
}

/** The canonical request: one comma list, the cursor the client sent, the coding its answer had. */
async function canonical(sent: Sent) {
  const url = new URL(sent.target, base);
  const query = new URLSearchParams();
  for (const [name, value] of new URLSearchParams(url.search)) {
    const parameter = name.replace(/\[\]$/, '');
    const earlier = query.get(parameter);
    query.set(parameter, earlier === null ? value : `${earlier},${value}`);
  }
  const target = `${url.pathname}?${[...query].map(([name, value]) => `${name}=${value}`).join('&')}`;
  const answer = await request(new URL(target, base), {
    headers: { authorization: `Bearer ${PARTNER}`, 'accept-encoding': sent.acceptEncoding },
  });
  const bytes = Buffer.from(await answer.body.arrayBuffer());
  const coding = answer.headers['content-encoding'];
  const body = coding === 'br' ? brotliDecompressSync(bytes) : coding === 'gzip' ? gunzipSync(bytes) : bytes;
  return { target, status: answer.statusCode, etag: answer.headers.etag, body: JSON.parse(body.toString()) };
}

describe('clients generated from /docs/openapi.json, unedited', () => {
  it('generate and compile under strict TypeScript as generated', async () => {
    for (const client of CLIENTS) await generate(client);
    const tsconfig = {
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        lib: ['ES2023', 'DOM'],
        module: 'ESNext',
        moduleResolution: 'Bundler',
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
      },
      include: CLIENTS.map((client) => `${client.name}/**/*.ts`),
    };
    writeFileSync(join(work, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
    const compiled = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: work, env: ENV }).catch(
      (error: { stdout?: string }) => ({ stdout: `${error.stdout}` }),
    );
    expect(compiled.stdout).toBe('');
  }, 300_000);

  it.each(CLIENTS)(
    '$name walks the list by its cursors and reads details: the answers of the comma list',
    async (client) => {
      const folder = join(work, client.name);
      const { stdout } = await run(process.execPath, [TSX, `${client.name}.ts`], {
        cwd: folder,
        env: { ...ENV, CATALOGUE_URL: base, CATALOGUE_KEY: PARTNER },
        timeout: 60_000,
      });
      const report = JSON.parse(stdout) as WalkReport;

      expect(report.pages[0]!.target).toBe(client.sends);
      // The fixture's 204 modules, PAGE_SIZE (70) a page along the client's cursors, every id once and in order.
      expect(report.pages.map((page) => page.status)).toEqual([200, 200, 200]);
      expect(report.pages.map((page) => (page.body as { data: unknown[] }).data.length)).toEqual([
        PAGE_SIZE,
        PAGE_SIZE,
        204 - 2 * PAGE_SIZE,
      ]);
      const ids = report.pages.flatMap((page) =>
        (page.body as { data: { id: number }[] }).data.map((m) => m.id),
      );
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(204);
      for (const sent of [...report.pages, report.module, report.manufacturer]) {
        const expected = await canonical(sent);
        expect(sent.status, sent.target).toBe(expected.status);
        expect(sent.etag, `${sent.target} ≡ ${expected.target}`).toBe(expected.etag);
        expect(sent.body, `${sent.target} ≡ ${expected.target}`).toEqual(expected.body);
      }
      const first = report.pages[0]!.body as { data: Record<string, unknown>[] };
      expect(Object.keys(first.data[0]!)).toEqual(['id', 'name', 'hp', 'tags']);
      expect((report.module.body as { data: { id: number } }).data.id).toBe(MODULE_ID);
      expect(Object.keys((report.module.body as { data: object }).data)).toEqual(
        expect.arrayContaining(['ins', 'tags']),
      );
      expect(
        (report.manufacturer.body as { data: { modules: unknown[] } }).data.modules.length,
      ).toBeGreaterThan(0);
    },
  );
});
