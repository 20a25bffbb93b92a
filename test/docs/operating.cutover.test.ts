/**
 * The operator's guide's moving day and leaked-key runbook (docs/operating.md), run as written against a real
 * `npm start`: every bash block of "Moving day" in order, in one bash, in a working directory laid out like the
 * repository (`npm run keys` and `npm run smoke` as its package.json runs them), with an old system's database
 * made here (SQLite: one that kept SHA-256 hashes, one that kept the keys themselves — the section run once for
 * each, each time with its own export block), the AWS CLI a stand-in that records the DNS changes, and the
 * old key read by the guide's `read` from standard input. Then the keys imported are asked of the API as a
 * consumer asks: the active ones answer 200 with their tier's limits, the revoked ones 401; run again, the
 * import writes nothing. Then the runbook's blocks, for a key a container has cached as accepted: refused at
 * once. No key the old system issued appears in any output, the guide's nor npm start's (its request lines and
 * audit lines included).
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../tables/keys.js';
import { type CodeBlock, codeBlocks, sectionAt } from '../helpers/manual.js';
import { npmStartSuite, type Started, stop } from '../helpers/npm-start.js';

const ROOT = join(import.meta.dirname, '..', '..');
const GUIDE = readFileSync(join(ROOT, 'docs', 'operating.md'), 'utf8');
const MOVING_DAY = 'Moving day: from the old API to this one';
const RUNBOOK = 'A leaked key: the runbook';
const sqlite3 = (() => {
  try {
    execFileSync('sqlite3', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

/** The bash blocks of a `## ` section, in order. */
function bashBlocks(heading: string): CodeBlock[] {
  return codeBlocks(GUIDE).filter(
    (block) => block.info === 'bash' && sectionAt(GUIDE, block.line) === heading,
  );
}

const freshKey = () => `pk_live_${randomBytes(17).toString('base64url').slice(0, 22)}`;

interface OldKey {
  key: string;
  tier: 'free' | 'partner';
  revoked: boolean;
  minute?: number;
}

/** The old system's keys: free and partner, with owners and labels, one revoked. */
function oldKeys(): OldKey[] {
  return [
    { key: freshKey(), tier: 'partner', revoked: false, minute: 1200 },
    { key: freshKey(), tier: 'free', revoked: false },
    { key: freshKey(), tier: 'free', revoked: false },
    { key: freshKey(), tier: 'partner', revoked: true, minute: 900 },
  ];
}

/** The old system's database: `api_keys` kept SHA-256 hashes, `tokens` kept the keys themselves. */
function oldDatabase(path: string, hashed: OldKey[], plain: OldKey[]): void {
  const q = (text: string) => `'${text.replaceAll("'", "''")}'`;
  const sql = [
    'CREATE TABLE api_keys (id INTEGER PRIMARY KEY, key_hash TEXT, plan TEXT, account_id TEXT, name TEXT, per_minute INTEGER, per_month INTEGER, expires_at TEXT, created_at TEXT, revoked_at TEXT);',
    ...hashed.map(
      (old, i) =>
        `INSERT INTO api_keys VALUES (${i + 1}, ${q(hashApiKey(old.key))}, ${q(old.tier === 'partner' ? 'partner' : 'basic')}, ${q(`acct-${i % 2}`)}, ${q(`app ${i}`)}, ${old.minute ?? 'NULL'}, ${old.tier === 'partner' ? 2_000_000 : 'NULL'}, NULL, '2024-03-0${i + 1} 10:00:00', ${old.revoked ? "'2025-01-01 00:00:00'" : 'NULL'});`,
    ),
    'CREATE TABLE tokens (id INTEGER PRIMARY KEY, token TEXT, tier TEXT, user_id TEXT, label TEXT, created TEXT, active INTEGER);',
    ...plain.map(
      (old, i) =>
        `INSERT INTO tokens VALUES (${100 + i}, ${q(old.key)}, ${q(old.tier)}, ${i === 0 ? 'NULL' : q(`user-${i}`)}, ${q(`token ${i}`)}, '2024-05-0${i + 1}T08:00:00Z', ${old.revoked ? 0 : 1});`,
    ),
  ];
  execFileSync('sqlite3', [path], { input: sql.join('\n') });
}

/** A stand-in `aws` that records its calls and answers as Route 53 and CloudWatch Logs would. */
function awsStandIn(bin: string): () => string[] {
  const log = join(bin, 'aws-calls.log');
  writeFileSync(
    join(bin, 'aws'),
    `#!/usr/bin/env bash
all="$*"
printf 'aws %s\\n' "\${all//$'\\n'/ }" >> '${log}'
case "$1 $2" in
  "route53 list-hosted-zones-by-name") echo /hostedzone/Z0EXAMPLE ;;
  "route53 list-resource-record-sets") echo old-api.example.net ;;
  "route53 change-resource-record-sets") echo /change/C0EXAMPLE ;;
  "logs start-query") echo 0e1a-example-query ;;
  "logs get-query-results") [[ "$*" == *"--query status"* ]] && echo Complete || echo '(no rows)' ;;
esac
exit 0
`,
  );
  chmodSync(join(bin, 'aws'), 0o755);
  return () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);
}

const suite = npmStartSuite('cutover', { published: true });
let started: Started;
let work: string;
let calls: () => string[];
let env: Record<string, string>;
const hashed = oldKeys();
const plain = oldKeys();
const outputs: string[] = [];

beforeAll(async () => {
  if (!sqlite3) return;
  started = await suite.start({ CATALOGUE_DEV_KEYS: '' });
  const out = started.output();
  const [, dynamodb, keysTable, countersTable] =
    /DynamoDB: (http:\/\/127\.0\.0\.1:\d+) \(tables ([\w-]+), ([\w-]+)\)/.exec(out) ?? [];
  work = suite.directory('cutover-work');
  const bin = join(work, 'bin');
  mkdirSync(bin);
  calls = awsStandIn(bin);
  const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
  writeFileSync(
    join(work, 'package.json'),
    JSON.stringify({
      private: true,
      scripts: {
        keys: `${tsx} ${join(ROOT, 'admin/cli.ts')}`,
        smoke: `${tsx} ${join(ROOT, 'ops/smoke.ts')}`,
      },
    }),
  );
  oldDatabase(join(work, 'old.db'), hashed, plain);
  env = {
    PATH: `${bin}:${process.env.PATH}`,
    HOME: process.env.HOME ?? '',
    KEYS_TABLE: keysTable!,
    COUNTERS_TABLE: countersTable!,
    DYNAMODB_ENDPOINT: dynamodb!,
    NEW_API: started.base,
    PUBLIC_API: started.base,
    API: started.base,
    DOMAIN: 'api.example.com',
    NEW_TARGET: 'd111example.cloudfront.net',
    DASHBOARD_URL: 'https://console.aws.amazon.com/cloudwatch/home#dashboards:name=Example',
    PROXY_LOG_GROUP: '/aws/lambda/Example-Proxy',
  };
}, 180_000);
afterAll(async () => {
  if (started) await stop(started);
});

/** The blocks in one bash (as pasted: one shell), `input` on its standard input; what it printed. */
function runBlocks(blocks: readonly CodeBlock[], input: string): Promise<string> {
  const script = blocks.map((block, i) => `echo '@@block ${i}@@'\n${block.lines.join('\n')}`).join('\n');
  return new Promise((resolve, reject) => {
    const child = execFile(
      'bash',
      ['-euo', 'pipefail', '-c', script],
      { cwd: work, env },
      (error, stdout, stderr) => {
        outputs.push(stdout, stderr);
        if (error) reject(new Error(`${error.message}\n${stdout}\n${stderr}`));
        else resolve(`${stdout}\n${stderr}`);
      },
    );
    child.stdin?.end(input);
  });
}

/** What the API answers a consumer sending `key`: the status, and the limits in its rate-limit headers. */
async function asked(key: string) {
  const response = await fetch(`${started.base}/standards?limit=1`, {
    headers: { authorization: `Bearer ${key}` },
  });
  await response.arrayBuffer();
  return {
    status: response.status,
    minute: response.headers.get('x-ratelimit-limit-minute'),
    month: response.headers.get('x-ratelimit-limit-month'),
  };
}

/**
 * What the API answers an old key: refused if it came over revoked; else 200 with its limits — a hashed
 * system's partner keys carry theirs (per_minute, per_month), the plain system keeps none (the defaults).
 */
function expected(old: OldKey, system: readonly OldKey[]) {
  if (old.revoked) return { status: 401, minute: null, month: null };
  if (old.tier === 'free') return { status: 200, minute: '60', month: '5000' };
  return system === hashed
    ? { status: 200, minute: String(old.minute), month: '2000000' }
    : { status: 200, minute: '600', month: '1000000' };
}

describe.skipIf(!sqlite3)('moving day, as the guide says (sqlite3 for the old database)', () => {
  const blocks = bashBlocks(MOVING_DAY);
  const exportBlocks = blocks.filter((block) =>
    block.lines.some((line) => line.startsWith('sqlite3 old.db')),
  );

  it('the guide has its steps: set-up, two exports, dry run, import, compare, DNS, switch, watch, going back', () => {
    expect(exportBlocks).toHaveLength(2);
    expect(blocks.length).toBeGreaterThanOrEqual(9);
  });

  it.each([
    ['kept SHA-256 hashes', 0, hashed],
    ['kept the keys themselves', 1, plain],
  ] as const)(
    'from an old system that %s: every key over, refused ones refused, DNS switched and back',
    async (_, which, keys) => {
      const own = keys[0]!;
      const printed = await runBlocks(
        blocks.filter((block) => !exportBlocks.includes(block) || block === exportBlocks[which]),
        `${own.key}\n`,
      );

      expect(printed).toMatch(/^dry run: nothing written$/m);
      expect(printed).toMatch(/^imported 4 keys in [\d.]+ s$/m);
      expect(printed).toMatch(/^ {2}to import: +0 keys$/m); // the import again at the switch
      expect(printed).toMatch(
        new RegExp(`^x-ratelimit-limit-minute: ${expected(own, keys).minute}\\r?$`, 'im'),
      );
      expect(printed).not.toMatch(/\bFAIL\b/);
      for (const old of keys) expect(await asked(old.key), old.key.slice(0, 12)).toEqual(expected(old, keys));
      const dns = calls().filter((call) => call.startsWith('aws route53 change-resource-record-sets'));
      expect(dns.map((call) => /"Value": "([^"]+)"/.exec(call)?.[1]).slice(-3)).toEqual([
        'old-api.example.net',
        'd111example.cloudfront.net',
        'old-api.example.net',
      ]);
    },
    300_000,
  );

  it('the leaked-key runbook: identified, refused at once where it was cached as accepted, found, replaced', async () => {
    const leaked = hashed[1]!.key;
    expect((await asked(leaked)).status).toBe(200); // now cached as accepted by npm start's proxy
    writeFileSync(join(work, 'leaked.txt'), `${leaked}\n`, { mode: 0o600 });

    const printed = await runBlocks(bashBlocks(RUNBOOK), '');

    expect(printed).toMatch(/"status": "active"/);
    expect(printed).toMatch(/revoked: refused \(401 invalid_key\) by every proxy container at once/);
    expect(printed).toMatch(/^401$/m);
    expect(printed).toMatch(/^key: +pk_live_[A-Za-z0-9_-]{22}$/m);
    expect(await asked(leaked)).toEqual({ status: 401, minute: null, month: null });
    expect(existsSync(join(work, 'leaked.txt'))).toBe(false);
    expect(
      calls().some(
        (call) => call.startsWith('aws logs start-query') && call.includes("filter key_id = 'key_"),
      ),
    ).toBe(true);
  }, 300_000);

  it('a file nobody here wrote, one bad line of each kind: every one refused by its number, nothing written; fixed, imported, run again: nothing', async () => {
    const good = oldKeys();
    const lines = [
      JSON.stringify({
        key: good[0]!.key,
        tier: 'partner',
        minute: 1200,
        month: 2_000_000,
        owner: 'judge-1',
      }),
      JSON.stringify({
        key_sha256: hashApiKey(good[1]!.key),
        tier: 'free',
        owner: 'judge-1',
        external_id: 9,
      }),
      JSON.stringify({ key: good[3]!.key, tier: 'partner', status: 'revoked' }),
      'not json at all',
      JSON.stringify({ key: `${good[2]!.key.slice(0, -1)}`, tier: 'free' }),
      JSON.stringify({ key_sha256: 'xyz', tier: 'free' }),
      JSON.stringify({ key: freshKey(), tier: 'gold' }),
      JSON.stringify({ key: freshKey(), tier: 'free', month: 10 }),
      JSON.stringify({ key: freshKey(), tier: 'free', expires: '2027-13-01' }),
      JSON.stringify({ key: freshKey(), tier: 'free', owner: 'has space' }),
      JSON.stringify({ key: good[0]!.key, tier: 'partner' }),
      JSON.stringify({ key: freshKey(), tier: 'free', label: good[2]!.key.toUpperCase() }),
    ];
    writeFileSync(join(work, 'judge.jsonl'), `${lines.join('\n')}\n`);
    writeFileSync(join(work, 'judge-fixed.jsonl'), `${lines.slice(0, 3).join('\n')}\n`);
    const keys = (file: string) =>
      runBlocks([{ info: 'bash', line: 0, lines: [`npm run keys -- import ${file} || echo "exit $?"`] }], '');

    const refused = await keys('judge.jsonl');
    const refusedAt = performance.now();
    const nothing = await asked(good[0]!.key);
    const imported = await keys('judge-fixed.jsonl');
    const again = await keys('judge-fixed.jsonl');

    expect(refused).toMatch(/refused: 9 lines: nothing written/);
    for (const [line, field] of [
      [4, 'line'],
      [5, 'key'],
      [6, 'key_sha256'],
      [7, 'tier'],
      [8, 'tier'],
      [9, 'expires'],
      [10, 'owner'],
      [11, 'key'],
      [12, 'label'],
    ] as const) {
      expect(refused).toMatch(new RegExp(`^ {4}line ${line}: ${field} `, 'm'));
    }
    expect(refused).toMatch(/^exit 2$/m);
    expect(nothing.status).toBe(401);
    expect(imported).toMatch(/^imported 3 keys in/m);
    expect(again).toMatch(/^ {2}to import: +0 keys$/m);
    expect(again).toMatch(/^ {2}already there: 3 keys/m);
    // good[0] was refused before its import (`nothing`): the container remembers that refusal for
    // KEY_NEGATIVE_CACHE_TTL_MS (10 s, docs/keys.md), then answers it — within that bound, not at once.
    let answered = await asked(good[0]!.key);
    while (answered.status === 401 && performance.now() - refusedAt < 12_000) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      answered = await asked(good[0]!.key);
    }
    expect(answered).toEqual({ status: 200, minute: '1200', month: '2000000' });
    expect(await asked(good[1]!.key)).toEqual({ status: 200, minute: '60', month: '5000' });
    expect((await asked(good[3]!.key)).status).toBe(401);
    hashed.push(...good);
  }, 120_000);

  it('shows no key the old system issued, nor a near miss of one, in any output or log line', () => {
    const everything = [...outputs, started.output()].join('\n').toLowerCase();
    for (const old of [...hashed, ...plain]) {
      const secret = old.key.slice(8).toLowerCase();
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(0, 16));
    }
  });
});
