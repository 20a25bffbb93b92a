/**
 * docs/reference/admin/samples.ts: the key-administration page's samples are programs that work. Every
 * operation's curl line (bash, curl's `--aws-sigv4`), TypeScript program (type-checked under a consumer's
 * strictest flags, run on Node.js) and Python program (Debian's python3-botocore) signs its request and is
 * answered as its example was by the admin API of `npm start` (local/admin.ts: the SigV4 check a function
 * URL makes, over dynalite), with the local credentials in the AWS variables the samples read — the key ids of
 * the page's story swapped for keys of these tables. Also: what a sample is made of, for a request it shows.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOperationExamples } from '../../../../docs/reference/admin/document.js';
import { type AdminOperationExamples, STORY_TODAY } from '../../../../docs/reference/admin/examples.js';
import { curlSample, pythonSample, typescriptSample } from '../../../../docs/reference/admin/samples.js';
import type { PageDocument, ShownExchange } from '../../../../docs/reference/shown.js';
import { type LocalAdmin, startLocalAdmin } from '../../../../local/admin.js';
import { issueKey } from '../../../helpers/admin.js';
import { type DynamoFixture, dynamoFixture } from '../../../helpers/dynamo.js';
import { ADMIN_OPENAPI_PATH } from '../../../helpers/openapi.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
/** In the repository, so the TypeScript programs resolve the AWS SDK's packages as a project of theirs would. */
const SCRATCH = join(ROOT, 'node_modules/.cache/catalogue-admin-samples');
/**
 * The order a reader could run them in: a key changed, rolled, revoked and made usable again last; then found
 * and revoked from the key itself, and keys imported.
 */
const ORDER = [
  'issue',
  'list',
  'get',
  'lookup',
  'usage',
  'limits',
  'expiry',
  'roll',
  'revoke',
  'enable',
  'revokeByKey',
  'import',
];

let db: DynamoFixture;
let admin: LocalAdmin;
let examples: Map<string, AdminOperationExamples>;
const directory = mkdtempSync(join(tmpdir(), 'cat-admin-samples-'));
let scratch: string;

beforeAll(async () => {
  db = await dynamoFixture();
  admin = await startLocalAdmin({
    // Each language issues and rolls keys of user_42: room for all three.
    env: { ADMIN_MAX_KEYS_PER_OWNER: '20' },
    dynamodbEndpoint: db.server.endpoint,
    keysTable: db.keysTable,
    countersTable: db.countersTable,
    directory,
    port: 0,
    log: () => {},
  });
  examples = await adminOperationExamples(
    JSON.parse(readFileSync(ADMIN_OPENAPI_PATH, 'utf8')) as PageDocument,
  );
  mkdirSync(SCRATCH, { recursive: true });
  scratch = mkdtempSync(join(SCRATCH, 'run-'));
}, 120_000);

afterAll(async () => {
  await new Promise((closed) => admin?.server.close(closed));
  await db?.dispose();
  rmSync(directory, { recursive: true, force: true });
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/**
 * A sample's dates moved from the story's day to today (an expiry in the story's future may be in the past by
 * now), as a reader moves them.
 */
const today = (source: string) =>
  source.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, (iso) =>
    new Date(Date.parse(iso) - Date.parse(STORY_TODAY) + Date.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  );

/**
 * The environment a sample reads: the admin API's URL, the caller's credentials and region, and the key that
 * the samples sending a key itself take (`CATALOGUE_KEY`).
 */
function sampleEnv(key: string): NodeJS.ProcessEnv {
  return {
    CATALOGUE_KEY: key,
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    CATALOGUE_ADMIN_URL: admin.url,
    AWS_ACCESS_KEY_ID: admin.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: admin.credentials.secretAccessKey,
    AWS_REGION: admin.region,
  };
}

/**
 * The samples of every operation in ORDER, their story's key ids swapped for a free key and a partner key of
 * these tables (fresh for each language: a roll or a revoke is done once), with the status each must print.
 */
async function samplesFor(
  language: 'curl' | 'typescript' | 'python',
): Promise<{ key: string; samples: { operation: string; source: string; status: number }[] }> {
  const issued = examples.get('issue')!.success;
  const storyKey = (index: number) => JSON.parse(issued[index]!.exchange.body!).data.key_id as string;
  const laptop = await issueKey(db, { tier: 'free', owner: 'user_42', label: `${language} laptop` });
  const sync = await issueKey(db, { tier: 'partner', owner: 'user_42', label: `${language} sync` });
  const real = new Map([
    [storyKey(0), laptop.record.keyId],
    [storyKey(1), sync.record.keyId],
  ]);
  const samples = ORDER.map((operation) => {
    const first = examples.get(operation)!.success[0]!;
    const source = first.exchange.request.target.match(/key_[A-Za-z0-9]{10}/)
      ? examples.get(operation)!.samples[language].replace(/key_[A-Za-z0-9]{10}/g, (id) => {
          const swapped = real.get(id);
          if (!swapped) throw new Error(`${operation}: the sample names ${id}, a key of no example`);
          return swapped;
        })
      : examples.get(operation)!.samples[language];
    return { operation, source: today(source), status: first.exchange.status };
  });
  return { key: laptop.key, samples };
}

describe('the samples, run against the admin API of npm start', () => {
  it('curl signs with --aws-sigv4: every operation answers as its example', async () => {
    const { key, samples } = await samplesFor('curl');
    for (const { operation, source } of samples) {
      const { stdout } = await run('bash', ['-c', source], { env: sampleEnv(key), timeout: 20_000 });
      const answer = JSON.parse(stdout);

      expect(answer.error, `${operation}: ${stdout}`).toBeUndefined();
      expect(answer.data, operation).toBeDefined();
    }
  }, 120_000);

  it('TypeScript compiles under the strictest flags and signs with the AWS SDK: every operation answers as its example', async () => {
    const { key, samples } = await samplesFor('typescript');
    const files = samples.map(({ operation }) => `${operation}.mts`);
    for (const [index, { source }] of samples.entries()) writeFileSync(join(scratch, files[index]!), source);
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          noPropertyAccessFromIndexSignature: true,
          noEmit: true,
          target: 'ES2022',
          lib: ['ES2022'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          skipLibCheck: true,
        },
        files,
      }),
    );
    const checked = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: scratch }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(checked).toBe('');
    writeFileSync(
      join(scratch, 'run.mjs'),
      'for (const file of process.argv.slice(2)) { console.log("===", file); await import("./" + file); }\n',
    );

    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'run.mjs', ...files], {
      cwd: scratch,
      env: sampleEnv(key),
      timeout: 60_000,
    });

    const printed = stdout.split(/^=== /m).slice(1);
    for (const [index, { operation, status }] of samples.entries()) {
      expect(printed[index], operation).toMatch(new RegExp(`^${operation}\\.mts\\n${status} \\{`));
    }
  }, 120_000);

  it('Python signs with botocore: every operation answers as its example', async () => {
    const { key, samples } = await samplesFor('python');
    const files = samples.map(({ operation, source }) => {
      const file = join(scratch, `${operation}.py`);
      writeFileSync(file, source);
      return file;
    });
    const runner = [
      'import sys',
      'for path in sys.argv[1:]:',
      '    print("===", path.rsplit("/", 1)[-1], flush=True)',
      '    exec(compile(open(path).read(), path, "exec"), {"__name__": "__main__"})',
      '    sys.stdout.flush()',
    ].join('\n');

    const { stdout } = await run('/usr/bin/python3', ['-c', runner, ...files], {
      env: sampleEnv(key),
      timeout: 60_000,
    });

    const printed = stdout.split(/^=== /m).slice(1);
    for (const [index, { operation, status }] of samples.entries()) {
      expect(printed[index], operation).toMatch(new RegExp(`^${operation}\\.py\\n${status} \\{`));
    }
  }, 120_000);
});

describe('a sample', () => {
  const exchange: ShownExchange = {
    request: {
      method: 'POST',
      target: '/v1/keys/key_AAAAAAAAAA/expiry',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'x' },
      body: '{"expires":null,"note":"it\'s"}',
    },
    status: 200,
    headers: {},
    body: '{}',
  };

  it('sends the method, path, JSON body and a fresh Idempotency-Key of its exchange', () => {
    expect(curlSample(exchange)).toBe(
      [
        'curl -s -X POST "$CATALOGUE_ADMIN_URL/keys/key_AAAAAAAAAA/expiry"',
        '  --aws-sigv4 "aws:amz:$AWS_REGION:lambda"',
        '  --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY"',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template.
        '  ${AWS_SESSION_TOKEN:+-H "x-amz-security-token: $AWS_SESSION_TOKEN"}',
        '  -H "Content-Type: application/json"',
        '  -H "Idempotency-Key: $(openssl rand -hex 16)"',
        `  -d '{"expires":null,"note":"it'\\''s"}'`,
      ].join(' \\\n'),
    );
    expect(typescriptSample(exchange)).toContain(
      "const body = JSON.stringify({ expires: null, note: 'it\\'s' });",
    );
    expect(typescriptSample(exchange)).toContain("'idempotency-key': crypto.randomUUID(),");
    expect(pythonSample(exchange)).toContain(
      'body = json.dumps({"expires": None, "note": "it\'s"}).encode()',
    );
    expect(pythonSample(exchange)).toContain('"Idempotency-Key": str(uuid.uuid4()),');
  });

  it('of a GET has no body, no Content-Type and no -X', () => {
    const get: ShownExchange = {
      ...exchange,
      request: { method: 'GET', target: '/v1/keys?owner=user_42', headers: {} },
    };

    expect(curlSample(get).split(' \\\n')[0]).toBe('curl -s "$CATALOGUE_ADMIN_URL/keys?owner=user_42"');
    expect(curlSample(get)).not.toContain('-d ');
    expect(typescriptSample(get)).not.toContain('body');
    expect(pythonSample(get)).toContain('request = AWSRequest(method="GET", url=url, headers=headers)');
  });
});
