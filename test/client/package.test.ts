/**
 * The client as a consumer meets it (client/package.json): built by tsdown, packed by `npm pack`, linted by
 * publint and @arethetypeswrong/cli, installed from the tarball (offline: it has no dependencies) into a scratch
 * project outside the repository, and used there against the real local stack (proxy on node:http, catalogue on
 * s3rver, keys and quota on dynalite): an ESM script (configured from CATALOGUE_URL and CATALOGUE_KEY), a
 * CommonJS script, a strict type-check under NodeNext and Bundler resolution (lib ES2020) of 0.2's usage
 * unchanged — the type tests of the detail and the narrowed list types (test/client/types.test.ts's cases, here
 * with `@ts-expect-error` and an exact-equality check of its own) — and of 0.3's: error codes (a misspelt one
 * does not compile, a `switch` narrows), the hooks, `timeout` and `responseOf`, which then run against the stack
 * and a server that stalls; every TypeScript example of client/README.md and every TypeScript sample of
 * the reference page type-checked under the strict flags the README advertises and run, each printing what it
 * shows (`// →` lines, the page's `// ` lines), and the CommonJS build evaluated in a bare context that has
 * nothing but web-platform globals (as in a worker).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createContext, runInContext } from 'node:vm';
import { type LocalServer, startDynamo } from '@catalogue/local-aws';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTables } from '../../admin/tables.js';
import { dynamoClient, leanDynamo } from '../../aws/sdk.js';
import { operationExamples } from '../../docs/reference/examples.js';
import { createHttpServer } from '../../proxy/adapters/http.js';
import { createProxy } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import { registerKey } from '../helpers/admin.js';
import { OPENAPI_PATH } from '../helpers/openapi.js';
import { CURSOR_SECRET, PREFIX, type Stack, startStack } from '../helpers/proxy.js';
import { linesShow } from '../helpers/shown.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const CLIENT = join(ROOT, 'client');
const BIN = join(ROOT, 'node_modules/.bin');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const PACKAGE = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};
const KEY = `pk_live_${'P'.repeat(22)}`;
const TABLES = { keysTable: 'package-keys', countersTable: 'package-counters' };
/** Where the README's examples point; replaced by the test stack's address. */
const DOCUMENTED_BASE = 'http://127.0.0.1:8787/v1';
/**
 * The package's size on the registry and on disk: a budget, so that nothing big slips into it unnoticed. 0.3.0
 * packs to 45.9 kB (164 kB unpacked; 0.2.0: 38.0 and 138): its README, CHANGELOG and declaration files grew
 * with what it added, while its JavaScript shed its doc comments.
 */
const BUDGET = { packedBytes: 50_000, unpackedBytes: 180_000 };

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
  const lean = leanDynamo(dynamo.endpoint);
  await registerKey({ dynamo: lean, ...TABLES }, KEY, {
    tier: 'partner',
    limits: { minute: 100_000, month: 1_000_000 },
  });
  await lean.close();
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
    env: childEnv({ CATALOGUE_KEY: KEY, CATALOGUE_URL: baseUrl }),
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

/** What an example says it prints: its `// → ` lines, in order. */
function shownOutput(code: string): string[] {
  return [...code.matchAll(/^\s*\/\/ → (.*)$/gm)].map((match) => match[1]!);
}

/** The README's strictest settings for a consumer, for programs that run on Node.js. */
const STRICT_NODE = {
  ...STRICT,
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  types: ['node'],
  typeRoots: [join(ROOT, 'node_modules/@types')],
  // The declaration files (the package's and @types/node) are checked without skipLibCheck above.
  skipLibCheck: true,
};

/** Type-check `programs` (file name → code) in the scratch project under STRICT_NODE; '' when they compile. */
async function typeCheckPrograms(name: string, programs: Record<string, string>): Promise<string> {
  for (const [file, code] of Object.entries(programs)) writeFileSync(join(scratch, file), code);
  writeFileSync(
    join(scratch, `tsconfig.${name}.json`),
    JSON.stringify({ compilerOptions: STRICT_NODE, files: Object.keys(programs) }),
  );
  return typeCheck(`tsconfig.${name}.json`);
}

/**
 * Compile each program to JavaScript as a consumer would, aimed at the test stack, and run them one after the
 * other in one Node.js process (one start instead of one each): what each printed with console.log, by file.
 */
async function runPrograms(programs: Record<string, string>): Promise<Record<string, string[]>> {
  const files: string[] = [];
  for (const [name, code] of Object.entries(programs)) {
    const file = name.replace(/\.mts$/, '.mjs');
    const javascript = ts.transpileModule(code.replaceAll(DOCUMENTED_BASE, baseUrl), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    writeFileSync(join(scratch, file), javascript);
    files.push(file);
  }
  writeFileSync(
    join(scratch, 'run-programs.mjs'),
    `import { format } from 'node:util';
const printed = {};
const log = console.log;
for (const file of process.argv.slice(2)) {
  const lines = (printed[file] = []);
  console.log = (...args) => lines.push(...format(...args).split('\\n'));
  await import(\`./\${file}\`);
}
console.log = log;
process.stdout.write(JSON.stringify(printed));
`,
  );
  const { stdout } = await run(process.execPath, ['run-programs.mjs', ...files], {
    cwd: scratch,
    env: childEnv({ CATALOGUE_KEY: KEY, CATALOGUE_URL: baseUrl }),
    timeout: 120_000,
  });
  const printed = JSON.parse(stdout) as Record<string, string[]>;
  return Object.fromEntries(
    Object.keys(programs).map((name) => [name, printed[name.replace(/\.mts$/, '.mjs')] ?? []]),
  );
}

describe('the npm package', () => {
  it('packs dist/, README.md, LICENSE and package.json only, within its size budget', () => {
    // Not asserted beyond the budget (sizes change with the code): reported for the issue and the README.
    console.info(
      `${PACKAGE.name}: ${packed.filename}, packed ${packed.size} B, unpacked ${packed.unpackedSize} B`,
    );
    expect(packed.files.map((file) => file.path).sort()).toEqual([
      'CHANGELOG.md',
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
    // The README's install instructions and User-Agent name this version.
    const readme = readFileSync(join(CLIENT, 'README.md'), 'utf8');
    expect(readme).toContain(`writes ${packed.filename}`);
    expect(readme).toContain(`User-Agent: catalogue-read-api-client/${PACKAGE.version} node/`);
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
// baseUrl and apiKey from CATALOGUE_URL and CATALOGUE_KEY
const client = new CatalogueClient();
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
  const client = new CatalogueClient({ baseUrl: process.env.CATALOGUE_URL, apiKey: process.env.CATALOGUE_KEY, cache });
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
  const detail = await client.modules.get(1, { include: ['tags'] });
  names.push(detail.name, ...detail.tags.map((tag) => tag.name));
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
    writeFileSync(join(scratch, 'type-cases.ts'), TYPE_CASES);
    for (const extension of ['ts', 'mts', 'cts'])
      writeFileSync(join(scratch, `cases-0.3.${extension}`), CASES_0_3);
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
        files: ['consumer.mts', 'consumer.cts', 'cases-0.3.mts', 'cases-0.3.cts'],
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
        files: ['consumer.ts', 'type-cases.ts', 'cases-0.3.ts'],
      }),
    );

    expect(await typeCheck('tsconfig.nodenext.json')).toBe('');
    expect(await typeCheck('tsconfig.bundler.json')).toBe('');
  }, 240_000);

  it("type-checks the README's examples, the reference page's TypeScript samples and a program of 0.3's hooks, timeout and responseOf under the flags the README advertises; each prints what it shows", async () => {
    const examples = readmeExamples();
    expect(examples.length).toBeGreaterThanOrEqual(6);
    const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    const samples = [...(await operationExamples(document))].map(([operationId, examples]) => ({
      file: `page-${operationId}.mts`,
      ...examples.typescript,
    }));
    expect(samples).toHaveLength(18);
    const programs = {
      ...Object.fromEntries(examples.map((code, index) => [`readme-${index + 1}.mts`, code])),
      ...Object.fromEntries(samples.map(({ file, code }) => [file, code])),
      // Checked and run with the others: one tsc and one Node.js process for all.
      'hooks-and-timeout.mts': HOOKS_AND_TIMEOUT,
    };

    expect(await typeCheckPrograms('examples', programs)).toBe('');
    const printed = await runPrograms(programs);

    for (const [index, code] of examples.entries()) {
      const lines = printed[`readme-${index + 1}.mts`]!;
      const shown = shownOutput(code);
      expect(shown.length, `README example ${index + 1} shows what it prints (// → lines)`).toBeGreaterThan(
        0,
      );
      expect(
        linesShow(shown, lines),
        `README example ${index + 1} prints:\n${lines.join('\n')}\nit shows:\n${shown.join('\n')}`,
      ).toBe(true);
    }
    for (const { file, prints } of samples) expect(printed[file], file).toEqual(prints);
    // The hooks, the timeout and responseOf, against the local stack and a server that stalls.
    expect(printed['hooks-and-timeout.mts']!.map((line) => JSON.parse(line))).toEqual([
      {
        requests: [0],
        traced: true,
        answers: [[200, expect.stringMatching(/^req_/)]],
        sameAnswer: true,
        remainingMinute: expect.any(Number),
      },
      {
        code: 'timeout',
        status: 0,
        message: expect.stringMatching(/^timed out: .* within 300 ms \(the timeout option\)$/),
        retried: ['timeout'],
        warnings: ['retry'],
      },
      { code: 'not_found', known: true, answer: 404 },
    ]);
  }, 240_000);

  it('marks the names it renamed @deprecated in both declaration files', () => {
    for (const file of ['index.d.ts', 'index.d.cts']) {
      const declarations = readFileSync(join(scratch, 'node_modules', PACKAGE.name, 'dist', file), 'utf8');
      for (const name of ['next_cursor', 'manufacturer_id']) {
        expect(declarations, `${file}: ${name}`).toMatch(
          new RegExp(`@deprecated Since 0\\.2\\.0[^/]*\\*/\\s*${name}\\??:`),
        );
      }
    }
  });
});

/**
 * test/client/types.test.ts's cases as a consumer's file: `@ts-expect-error` where a field or relation was not
 * asked for, and exact type equality without any library.
 */
const TYPE_CASES = `import type { CatalogueClient, Jack, Manufacturer, Module, ModuleField, ModuleListItem, ModuleSummary, TagRef } from '${PACKAGE.name}';
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function same<A, B>(_: Equal<A, B>): void {}

export async function typeCases(client: CatalogueClient): Promise<void> {
  const module = await client.modules.get(101);
  same<typeof module, Module>(true);
  const length: number = module.name.length;
  same<typeof module.depth_mm, number | null>(true);
  // @ts-expect-error -- tags were not asked for
  module.tags;
  const withTags = await client.modules.get(101, { include: ['tags', 'ins'] });
  same<typeof withTags.tags, TagRef[]>(true);
  same<typeof withTags.ins, Jack[]>(true);
  // @ts-expect-error -- outs were not asked for
  withTags.outs;

  const page = await client.modules.listPage({ fields: ['name'] });
  const item = page.data[0];
  if (item) same<typeof item, { id: number; name: string }>(true);
  same<typeof page.nextCursor, string | null>(true);
  const both = await client.modules.listPage({ fields: ['name', 'hp'], include: ['tags'] });
  const first = both.data[0];
  if (first) {
    same<typeof first, ModuleListItem<'name' | 'hp', 'tags'>>(true);
    // @ts-expect-error -- manufacturer_id was not among the fields
    first.manufacturer_id;
  }
  for await (const all of client.modules.list({ sort: 'name' })) same<typeof all, Module>(true);
  const chosen: ModuleField[] = ['name'];
  for await (const some of client.modules.list({ fields: chosen })) same<typeof some.name, string | undefined>(true);
  // @ts-expect-error -- not a module field (relations come with include)
  await client.modules.listPage({ fields: ['ins'] });

  const maker = await client.manufacturers.get(1, { include: ['modules'] });
  same<typeof maker.modules, ModuleSummary[]>(true);
  same<Awaited<ReturnType<typeof client.manufacturers.get>>, Manufacturer>(true);
  void length;
}
`;

/**
 * 0.3's types as a consumer's file (also compiled as .mts and .cts): the error codes — a misspelt code in a
 * comparison or a case is an error, a switch narrows, a switch over every code is exhaustive — and the hooks,
 * `timeout` and `responseOf`.
 */
const CASES_0_3 = `import { CatalogueApiError, CatalogueClient, isErrorCode, responseOf, type ClientWarning, type ErrorCode, type RateLimit, type RequestEvent, type ResponseEvent, type ResponseInfo } from '${PACKAGE.name}';
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function same<A, B>(_: Equal<A, B>): void {}

export function codes(error: CatalogueApiError): string {
  // @ts-expect-error -- a misspelt code does not compile
  if (error.code === 'not_foud') return 'never';
  switch (error.code) {
    case 'not_found':
      same<typeof error.code, 'not_found'>(true);
      return 'missing';
    // @ts-expect-error -- nor in a case
    case 'rate_limit_exeeded':
      return 'never';
    case 'unknown_code':
      same<typeof error.apiCode, string | undefined>(true);
      return error.apiCode ?? '';
    default: {
      same<typeof error.code, Exclude<ErrorCode, 'not_found' | 'unknown_code'>>(true);
      const text: string = error.code;
      return text;
    }
  }
}

export function exhaustive(code: ErrorCode): boolean {
  switch (code) {
    case 'unknown_parameter': case 'invalid_parameter': case 'unsupported_parameter': case 'missing_authorization':
    case 'malformed_authorization': case 'invalid_key': case 'not_found': case 'method_not_allowed':
    case 'configuration_error': case 'authentication_unavailable': case 'quota_unavailable': case 'origin_unavailable':
    case 'invalid_response': case 'unknown_code':
      return false;
    case 'rate_limit_exceeded': case 'network_error': case 'timeout':
      return true;
    default: {
      const missed: never = code;
      return missed;
    }
  }
}

export function fromElsewhere(logged: string): ErrorCode | undefined {
  return isErrorCode(logged) ? logged : undefined;
}

export async function hooksAndTimeout(): Promise<RateLimit | undefined> {
  const client = new CatalogueClient({
    baseUrl: 'http://127.0.0.1:8787/v1',
    apiKey: 'pk_live_x',
    timeout: 10_000,
    onRequest: ({ url, retry, headers }: RequestEvent) => {
      headers.set('traceparent', url + String(retry));
    },
    onResponse: async (event: ResponseEvent) => {
      same<typeof event.elapsedMs, number>(true);
    },
    onWarning: (warning: ClientWarning) => {
      if (warning.kind === 'retry') same<typeof warning.retry.code, ErrorCode>(true);
    },
    logger: false,
  });
  const page = await client.tags.listPage({ limit: 5, timeout: 2_000 });
  const module = await client.modules.get(1, { include: ['tags'], timeout: Infinity });
  const info: ResponseInfo | undefined = responseOf(page) ?? responseOf(module);
  // @ts-expect-error -- responseOf takes a result (an object), not an id
  responseOf(1);
  // @ts-expect-error -- timeout is milliseconds
  await client.tags.listPage({ timeout: '5s' });
  return info?.rateLimit;
}
`;

/** A consumer's program with the hooks, `timeout` and `responseOf`, run against the stack and a stalled server. */
const HOOKS_AND_TIMEOUT = `import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CatalogueApiError, CatalogueClient, isErrorCode, responseOf, type ResponseEvent } from '${PACKAGE.name}';

const requests: number[] = [];
const answers: ResponseEvent[] = [];
let traced = false;
const client = new CatalogueClient({
  baseUrl: 'http://127.0.0.1:8787/v1',
  timeout: 10_000,
  onRequest: ({ retry, headers }) => {
    requests.push(retry);
    headers.set('traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    traced = !headers.has('authorization');
  },
  onResponse: (event) => {
    answers.push(event);
  },
});
const page = await client.tags.listPage({ limit: 3 });
console.log(JSON.stringify({
  requests,
  traced,
  answers: answers.map((answer) => [answer.status, answer.requestId]),
  sameAnswer: responseOf(page.data[0]!)?.requestId === answers[0]?.requestId,
  remainingMinute: responseOf(page)?.rateLimit?.remainingMinute,
}));

// A server that takes every request and never answers.
const stalled = createServer(() => {});
await new Promise<void>((ready) => stalled.listen(0, '127.0.0.1', ready));
const retried: string[] = [];
const warnings: string[] = [];
const slow = new CatalogueClient({
  baseUrl: \`http://127.0.0.1:\${(stalled.address() as AddressInfo).port}/v1\`,
  timeout: 300,
  maxRetries: 1,
  onRetry: (event) => retried.push(event.code),
  onWarning: (warning) => warnings.push(warning.kind),
});
try {
  await slow.tags.listPage();
} catch (error) {
  if (!(error instanceof CatalogueApiError)) throw error;
  console.log(JSON.stringify({ code: error.code, status: error.status, message: error.message, retried, warnings }));
} finally {
  stalled.closeAllConnections();
  stalled.close();
}

const missing = await client.modules.get(999999).catch((error: unknown) => error);
if (missing instanceof CatalogueApiError) {
  console.log(JSON.stringify({ code: missing.code, known: isErrorCode(missing.apiCode), answer: responseOf(missing)?.status }));
}
`;

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
