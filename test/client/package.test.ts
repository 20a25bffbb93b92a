/**
 * The client as a consumer meets it (client/package.json): built by tsdown, packed by `npm pack`, linted by
 * publint and @arethetypeswrong/cli, installed from the tarball (offline: it has no dependencies) into a scratch
 * project outside the repository, and used there against the real local stack (proxy on node:http, catalogue on
 * s3rver, keys and quota on dynalite): an ESM script, a CommonJS script, a strict type-check under NodeNext and
 * Bundler resolution (lib ES2020), every TypeScript example of client/README.md type-checked and run, and the
 * CommonJS build evaluated in a bare context that has nothing but web-platform globals (as in a worker).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createContext, runInContext } from 'node:vm';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTables } from '../../admin/tables.js';
import { dynamoClient } from '../../aws/sdk.js';
import { type LocalServer, startDynamo } from '../../local/servers.js';
import { createHttpServer } from '../../proxy/adapters/http.js';
import { createProxy } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import { registerKey } from '../helpers/admin.js';
import { CURSOR_SECRET, PREFIX, type Stack, startStack } from '../helpers/proxy.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const CLIENT = join(ROOT, 'client');
const BIN = join(ROOT, 'node_modules/.bin');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const PACKAGE = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8')) as { name: string };
const KEY = `pk_live_${'P'.repeat(22)}`;
const TABLES = { keysTable: 'package-keys', countersTable: 'package-counters' };
/** Where the README's examples point; replaced by the test stack's address. */
const DOCUMENTED_BASE = 'http://127.0.0.1:8787/v1';
/** The package's size on the registry and on disk: a budget, so that nothing big slips into it unnoticed. */
const BUDGET = { packedBytes: 40_000, unpackedBytes: 150_000 };

interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string; size: number }[];
}

/** The environment of child processes: no npm_* variables of a surrounding `npm test` (prefix, package). */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

let scratch: string;
let tarball: string;
let packed: Packed;
let stack: Stack;
let dynamo: LocalServer;
let http: Server;
let baseUrl: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'cat-consumer-'));
  const servers = Promise.all([startStack(), startDynamo()]);
  // Build, then pack what was built (--ignore-scripts: prepack would build it a second time).
  await run(join(BIN, 'tsdown'), [], { cwd: CLIENT, env: childEnv() });
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch], {
    cwd: CLIENT,
    env: childEnv(),
  });
  packed = (JSON.parse(stdout) as Packed[])[0]!;
  tarball = join(scratch, packed.filename);
  // A consumer's own project, outside the repository; the tarball has no dependencies, so no registry is asked.
  writeFileSync(
    join(scratch, 'package.json'),
    JSON.stringify({ name: 'scratch-consumer', private: true, type: 'module' }),
  );
  await run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', tarball],
    { cwd: scratch, env: childEnv() },
  );

  [stack, dynamo] = await servers;
  const client = dynamoClient({ endpoint: dynamo.endpoint });
  await createTables(client, TABLES);
  await registerKey({ client, ...TABLES }, KEY, {
    tier: 'partner',
    limits: { minute: 100_000, month: 1_000_000 },
  });
  client.destroy();
  const config = loadConfig({
    CATALOGUE_BUCKET: stack.s3.bucket,
    CATALOGUE_PREFIX: PREFIX,
    S3_ENDPOINT: stack.s3.endpoint,
    KEYS_TABLE: TABLES.keysTable,
    COUNTERS_TABLE: TABLES.countersTable,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    CURSOR_SECRET,
  });
  http = createHttpServer(createProxy(config, { log: () => {} }));
  await new Promise<void>((ready) => http.listen(0, '127.0.0.1', ready));
  baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/v1`;
}, 180_000);

afterAll(async () => {
  http?.closeAllConnections();
  await new Promise((done) => http?.close(done));
  await dynamo?.dispose();
  await stack?.dispose();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Run `file` of the scratch project with node, with the key and the stack's base URL in its environment. */
async function node(file: string): Promise<string> {
  const { stdout } = await run(process.execPath, [file], {
    cwd: scratch,
    env: childEnv({ CATALOGUE_KEY: KEY, CATALOGUE_BASE_URL: baseUrl }),
    timeout: 60_000,
  });
  return stdout;
}

/** tsc (the repository's TypeScript) on a tsconfig of the scratch project; '' when it type-checks. */
async function typeCheck(config: string): Promise<string> {
  try {
    await run(process.execPath, [TSC, '-p', config], { cwd: scratch, env: childEnv() });
    return '';
  } catch (error) {
    return (error as { stdout?: string }).stdout ?? String(error);
  }
}

/** A consumer's strictest settings, with ES2020 as its library. */
const STRICT = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noPropertyAccessFromIndexSignature: true,
  noImplicitOverride: true,
  skipLibCheck: false,
  noEmit: true,
  target: 'ES2020',
  lib: ['ES2020'],
};

/** The TypeScript blocks of client/README.md: each is a whole program. */
function readmeExamples(): string[] {
  const readme = readFileSync(join(CLIENT, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

describe('the npm package', () => {
  it('packs dist/, README.md, LICENSE and package.json only, within its size budget', () => {
    // Not asserted beyond the budget (sizes change with the code): reported for the issue and the README.
    console.info(
      `${PACKAGE.name}: ${packed.filename}, packed ${packed.size} B, unpacked ${packed.unpackedSize} B`,
    );
    expect(packed.files.map((file) => file.path).sort()).toEqual([
      'LICENSE',
      'README.md',
      'dist/index.cjs',
      'dist/index.d.cts',
      'dist/index.d.ts',
      'dist/index.js',
      'package.json',
    ]);
    expect(packed.size).toBeLessThan(BUDGET.packedBytes);
    expect(packed.unpackedSize).toBeLessThan(BUDGET.unpackedBytes);
  });

  it('has no dependencies and imports nothing: no node: built-ins, no require', () => {
    const manifest = JSON.parse(
      readFileSync(join(scratch, 'node_modules', PACKAGE.name, 'package.json'), 'utf8'),
    );
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
    for (const file of ['index.js', 'index.cjs']) {
      const code = readFileSync(join(scratch, 'node_modules', PACKAGE.name, 'dist', file), 'utf8');
      expect(code, file).not.toMatch(/\bfrom\s*['"]|\bimport\s*\(|\brequire\s*\(|node:/);
    }
  });

  it('passes publint (strict) and @arethetypeswrong/cli on the tarball', async () => {
    const lint = await run(join(BIN, 'publint'), ['run', tarball, '--strict'], { env: childEnv() });
    expect(lint.stdout).toContain('All good!');
    // --no-definitely-typed: the package ships its own types; no registry look-up for @types.
    const attw = await run(join(BIN, 'attw'), [tarball, '--format', 'json', '--no-definitely-typed'], {
      env: childEnv(),
    }).catch((error: { stdout: string }) => ({ stdout: error.stdout }));
    const report = JSON.parse(attw.stdout) as { analysis: { problems: unknown[] } };
    expect(report.analysis.problems).toEqual([]);
  }, 120_000);
});

describe('a consumer project with the tarball installed', () => {
  it('runs an ESM script against the local stack', async () => {
    writeFileSync(
      join(scratch, 'esm.mjs'),
      `import { CatalogueApiError, CatalogueClient } from '${PACKAGE.name}';
const client = new CatalogueClient({ baseUrl: process.env.CATALOGUE_BASE_URL, apiKey: process.env.CATALOGUE_KEY });
const tags = [];
for await (const tag of client.tags.list({ sort: 'name', limit: 7 })) tags.push(tag.name);
const module = await client.modules.get(101, { include: ['tags'] });
const missing = await client.modules.get(999999).catch((error) => error);
console.log(JSON.stringify({ tags: tags.length, module: module.name, tagsOf101: module.tags.length,
  missing: missing instanceof CatalogueApiError ? missing.code : String(missing), rateLimit: client.rateLimit }));
`,
    );

    const out = JSON.parse(await node('esm.mjs'));

    expect(out).toMatchObject({ tags: stack.snapshot.tags.length, module: 'A-110-1', missing: 'not_found' });
    expect(out.tagsOf101).toBeGreaterThan(0);
    expect(out.rateLimit.limitMinute).toBe(100_000);
  }, 120_000);

  it('runs a CommonJS script against the local stack', async () => {
    writeFileSync(
      join(scratch, 'cjs.cjs'),
      `const { CatalogueApiError, CatalogueClient, MemoryEtagCache } = require('${PACKAGE.name}');
(async () => {
  const cache = new MemoryEtagCache({ maxEntries: 10 });
  const client = new CatalogueClient({ baseUrl: process.env.CATALOGUE_BASE_URL, apiKey: process.env.CATALOGUE_KEY, cache });
  const first = await client.manufacturers.get(1, { include: ['modules'] });
  const again = await client.manufacturers.get(1, { include: ['modules'] });
  const bad = await client.modules.listPage({ limit: 1000 }).catch((error) => error);
  console.log(JSON.stringify({ name: first.name, modules: first.modules.length, same: again.name === first.name,
    cached: cache.size, bad: bad instanceof CatalogueApiError ? bad.status + ' ' + bad.code : String(bad) }));
})();
`,
    );

    const out = JSON.parse(await node('cjs.cjs'));

    const doepfer = stack.snapshot.modules.filter((m) => m.manufacturer_id === 1).length;
    expect(out).toEqual({
      name: 'Doepfer',
      modules: doepfer,
      same: true,
      cached: 1,
      bad: '400 invalid_parameter',
    });
  }, 120_000);

  it('type-checks a strict consumer under NodeNext (ESM and CommonJS) and Bundler resolution, lib ES2020', async () => {
    const use = (from: string) => `${from}
export async function use(client: CatalogueClient): Promise<string[]> {
  const names: string[] = [];
  const options: ModuleListParams = { manufacturer_id: 1, fields: ['name', 'hp'], include: ['tags'] };
  for await (const module of client.modules.list(options)) names.push(module.name ?? String(module.id));
  const page: Page<Tag> = await client.tags.listPage({ limit: 5, cursor: undefined });
  const first = page.data[0];
  if (first) names.push(first.name);
  const retry = (event: RetryEvent): string => \`\${event.status} \${event.code} \${event.attempt} \${event.waitMs}\`;
  names.push(retry({ status: 429, code: 'rate_limit_exceeded', attempt: 1, waitMs: 1000, url: '', requestId: undefined }));
  try {
    await client.modules.get(1);
  } catch (error) {
    if (error instanceof CatalogueApiError) names.push(error.code, String(error.requestId));
  }
  return names;
}
export const client = new CatalogueClient({ baseUrl: 'http://127.0.0.1:8787/v1', apiKey: 'pk_live_x', onRetry: () => {} });
`;
    const imports = `CatalogueApiError, CatalogueClient, type ModuleListParams, type Page, type RetryEvent, type Tag`;
    writeFileSync(join(scratch, 'consumer.mts'), use(`import { ${imports} } from '${PACKAGE.name}';`));
    writeFileSync(join(scratch, 'consumer.cts'), use(`import { ${imports} } from '${PACKAGE.name}';`));
    writeFileSync(join(scratch, 'consumer.ts'), use(`import { ${imports} } from '${PACKAGE.name}';`));
    writeFileSync(
      join(scratch, 'tsconfig.nodenext.json'),
      JSON.stringify({
        compilerOptions: {
          ...STRICT,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files: ['consumer.mts', 'consumer.cts'],
      }),
    );
    // A web-platform consumer (Deno, a worker, a bundled app): DOM types, no Node.js types at all.
    writeFileSync(
      join(scratch, 'tsconfig.bundler.json'),
      JSON.stringify({
        compilerOptions: {
          ...STRICT,
          lib: ['ES2020', 'DOM'],
          types: [],
          module: 'ESNext',
          moduleResolution: 'Bundler',
        },
        files: ['consumer.ts'],
      }),
    );

    expect(await typeCheck('tsconfig.nodenext.json')).toBe('');
    expect(await typeCheck('tsconfig.bundler.json')).toBe('');
  }, 240_000);

  it("type-checks every example of the package's README and runs each against the fixture: each prints data", async () => {
    const examples = readmeExamples();
    expect(examples.length).toBeGreaterThanOrEqual(6);
    const files = examples.map((code, index) => {
      const file = `readme-${index + 1}.mts`;
      writeFileSync(join(scratch, file), code);
      return file;
    });
    writeFileSync(
      join(scratch, 'tsconfig.readme.json'),
      JSON.stringify({
        // The examples read `process.env.CATALOGUE_KEY` as most code does; the package's own types are checked
        // under noPropertyAccessFromIndexSignature and without skipLibCheck above, so here the declaration
        // files (the package's and @types/node) need not be checked again.
        compilerOptions: {
          ...STRICT,
          noPropertyAccessFromIndexSignature: false,
          skipLibCheck: true,
          target: 'ES2022',
          lib: ['ES2022'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files,
      }),
    );
    expect(await typeCheck('tsconfig.readme.json')).toBe('');

    for (const [index, code] of examples.entries()) {
      // As a consumer would run it after compiling: the same program as JavaScript, aimed at the test stack.
      const javascript = ts.transpileModule(code.replaceAll(DOCUMENTED_BASE, baseUrl), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      const file = `readme-${index + 1}.mjs`;
      writeFileSync(join(scratch, file), javascript);

      const lines = (await node(file)).trim().split('\n');

      expect(lines.length, `example ${index + 1} prints data`).toBeGreaterThan(0);
      expect(lines.join('\n'), `example ${index + 1}`).not.toMatch(/undefined|NaN|^$/m);
    }
  }, 240_000);
});

describe('a runtime with nothing but fetch and Web Crypto', () => {
  it('runs the CommonJS build in a bare context (no process, require, Buffer or node: modules)', async () => {
    const code = readFileSync(join(scratch, 'node_modules', PACKAGE.name, 'dist/index.cjs'), 'utf8');
    // Only what the web platform defines (as in a worker); the context's own intrinsics come from V8.
    const exports: Record<string, unknown> = {};
    const context = createContext({
      exports,
      module: { exports },
      fetch,
      Headers,
      Request,
      Response,
      URL,
      AbortController,
      AbortSignal,
      TextEncoder,
      TextDecoder,
      crypto: globalThis.crypto,
      btoa,
      atob,
      setTimeout,
      clearTimeout,
      performance,
    });
    runInContext(code, context);
    // The built client's own class, with the repository's types for it.
    const { CatalogueClient } = exports as {
      CatalogueClient: typeof import('../../client/index.js').CatalogueClient;
    };

    const client = new CatalogueClient({ baseUrl, apiKey: KEY });
    const page = await client.standards.listPage({ sort: 'id' });
    const again = await client.standards.listPage({ sort: 'id' });

    expect(page.data.map((standard) => standard.id)).toEqual(
      stack.snapshot.standards.map((standard) => standard.id).sort((a, b) => a - b),
    );
    expect(again).toEqual(page);
    expect('process' in context || 'require' in context || 'Buffer' in context).toBe(false);
  });
});
