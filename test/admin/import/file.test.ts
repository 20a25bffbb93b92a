/**
 * `npm run keys -- import FILE` (admin/import/file.ts) against dynalite: a file of keys nobody here wrote —
 * plain and hashed, revoked, expired, partner limits, owners, old ids — checked whole (one bad line of each
 * kind refused by its number, nothing written), dry-run, imported, run again (nothing twice), changed (never
 * overwritten), cut short and resumed, and an owner over the cap brought over whole. Also: the CLI around it.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as actions from '../../../admin/actions.js';
import { main } from '../../../admin/cli.js';
import { AdminTables } from '../../../admin/dynamo.js';
import { type ImportReport, importFile } from '../../../admin/import/file.js';
import { parseImportLine } from '../../../admin/import/line.js';
import { enterImported } from '../../../admin/ledger.js';
import { PARTNER_DEFAULT_LIMITS } from '../../../admin/settings.js';
import { leanDynamo } from '../../../aws/sdk.js';
import { FREE_TIER_LIMITS, hashApiKey, importedKeyId, type KeyRecord } from '../../../tables/keys.js';
import { adminContext } from '../../helpers/admin.js';
import { type DynamoFixture, dynamoFixture } from '../../helpers/dynamo.js';
import { startFaultProxy } from '../../helpers/fault-proxy.js';

let db: DynamoFixture;
const scratch = mkdtempSync(join(tmpdir(), 'cat-import-'));
beforeAll(async () => {
  db = await dynamoFixture();
});
afterAll(async () => {
  await db?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

const now = new Date('2026-11-24T12:00:00Z');
/** A key nobody issued: random, made here. */
const freshKey = () => `pk_live_${randomBytes(17).toString('base64url').slice(0, 22)}`;
let files = 0;
function file(lines: readonly (object | string)[]): string {
  const path = join(scratch, `keys-${++files}.jsonl`);
  writeFileSync(
    path,
    lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n'),
  );
  return path;
}
const run = (path: string, options: { dryRun?: boolean; env?: Record<string, string> } = {}) =>
  importFile({
    file: path,
    dryRun: options.dryRun ?? false,
    ctx: () => adminContext(db, () => now, options.env),
    now,
    progress: () => {},
  });
const stored = async (hash: string) => (await new AdminTables(db).keysByHash([hash])).get(hash);

/** A file of the old system's keys: what it held of each, and the key of each where it kept it. */
function oldSystem() {
  const keys = Array.from({ length: 6 }, freshKey);
  const owner = `org-${randomBytes(4).toString('hex')}`;
  const lines = [
    { key: keys[0], tier: 'free', owner, label: 'laptop', external_id: 101, created: '2024-05-01T08:00:00Z' },
    {
      key_sha256: hashApiKey(keys[1]!),
      tier: 'partner',
      owner,
      minute: 1200,
      month: 3_000_000,
      external_id: '102',
    },
    { key_sha256: hashApiKey(keys[2]!).toUpperCase(), tier: 'free', status: 'revoked', external_id: 103 },
    { key: keys[3], tier: 'partner', expires: '2026-01-01T00:00:00Z', external_id: 104 },
    { key: keys[4], tier: 'partner', owner: null, label: null, external_id: 105 },
    { key_sha256: hashApiKey(keys[5]!), tier: 'free', owner, expires: '2027-06-30', external_id: 106 },
  ];
  return { keys, owner, lines };
}

describe('a file of keys already issued', () => {
  it('dry run: checks and compares, writes nothing; then imports every key with what the file says', async () => {
    const { keys, owner, lines } = oldSystem();
    const path = file(lines);

    const dry = await run(path, { dryRun: true });
    const nothing = await stored(hashApiKey(keys[0]!));
    const report = await run(path);

    expect(nothing).toBeUndefined();
    expect(dry).toMatchObject({
      lines: 6,
      to_import: 6,
      revoked: 1,
      expired: 1,
      default_limits: 2,
      imported: null,
    });
    expect(report).toMatchObject({
      lines: 6,
      to_import: 6,
      already_there: 0,
      conflict_count: 0,
      refused_count: 0,
      owners: 1,
      owners_over_cap: [],
      imported: 6,
    } satisfies Partial<ImportReport>);
    const records = await Promise.all(keys.map((key) => stored(hashApiKey(key))));
    expect(records.map((record) => record?.keyId)).toEqual(keys.map((key) => importedKeyId(hashApiKey(key))));
    expect(records[0]).toMatchObject({
      tier: 'free',
      status: 'active',
      owner,
      label: 'laptop',
      limits: FREE_TIER_LIMITS,
      externalId: '101',
      created: '2024-05-01T08:00:00.000Z',
      imported: now.toISOString(),
    } satisfies Partial<KeyRecord>);
    expect(records[1]).toMatchObject({ tier: 'partner', limits: { minute: 1200, month: 3_000_000 } });
    expect(records[2]).toMatchObject({ status: 'revoked', externalId: '103' });
    expect(records[3]).toMatchObject({ expires: '2026-01-01T00:00:00.000Z' });
    expect(records[4]).toMatchObject({ limits: PARTNER_DEFAULT_LIMITS });
    expect(records[4]?.owner).toBeUndefined();
    // The owner's ledger counts its usable keys (0, 1 and 5), not the revoked or expired ones.
    const ledger = JSON.parse((await new AdminTables(db).readLedger(owner)).entries) as object;
    expect(Object.keys(ledger).sort()).toEqual([0, 1, 5].map((i) => records[i]!.keyId).sort());
    expect(JSON.stringify(report)).not.toMatch(/pk_live_/);
  });

  it('run again: imports nothing, changes nothing; a changed line is a conflict, named, never written', async () => {
    const { keys, lines } = oldSystem();
    const path = file(lines);
    await run(path);
    await actions.revoke(
      adminContext(db, () => now),
      importedKeyId(hashApiKey(keys[0]!)),
    );
    const before = await stored(hashApiKey(keys[1]!));

    const again = await run(path);
    const changed = await run(file([lines[0]!, { ...lines[1]!, minute: 1500 }, ...lines.slice(2)]));

    expect(again).toMatchObject({ to_import: 0, already_there: 5, conflict_count: 1, imported: null });
    expect(again.conflicts).toEqual([
      { line: 1, key_id: importedKeyId(hashApiKey(keys[0]!)), differs: ['status'] },
    ]);
    expect(changed.conflicts.map(({ line, differs }) => ({ line, differs }))).toEqual([
      { line: 1, differs: ['status'] },
      { line: 2, differs: ['minute'] },
    ]);
    expect(await stored(hashApiKey(keys[1]!))).toEqual(before);
  });

  it('refuses every bad line by its number, of each kind, and writes nothing at all', async () => {
    const good = freshKey();
    const twice = freshKey();
    const path = file([
      { key: good, tier: 'free' },
      'not json',
      { key: `${freshKey()}X`, tier: 'free' },
      { key_sha256: 'ab'.repeat(31), tier: 'free' },
      { key: freshKey(), tier: 'gold' },
      { key: freshKey(), tier: 'free', minute: 100 },
      { key: freshKey(), tier: 'partner', month: 0 },
      { key: freshKey(), tier: 'free', expires: '2026-02-30' },
      { key: freshKey(), tier: 'free', owner: 'no spaces please' },
      { key: twice, tier: 'free', external_id: 'dup' },
      { key: twice, tier: 'free' },
      { key: freshKey(), tier: 'free', external_id: 'dup' },
      '',
      { key: freshKey(), tier: 'free', label: twice },
      'x'.repeat(20_000),
    ]);
    // A last line that is not UTF-8.
    appendFileSync(path, Buffer.from([0x0a, 0x7b, 0xc3, 0x28, 0x7d]));

    const report = await run(path);

    expect(await stored(hashApiKey(good))).toBeUndefined();
    expect(report.imported).toBeNull();
    expect(report.refused.map(({ line, problems }) => `${line} ${problems[0]!.field}`)).toEqual([
      '2 line',
      '3 key',
      '4 key_sha256',
      '5 tier',
      '6 tier',
      '7 month',
      '8 expires',
      '9 owner',
      '11 key',
      '12 external_id',
      '14 label',
      '15 line',
      '16 line',
    ]);
    expect(report.refused_count).toBe(13);
    expect(report.refused.at(-1)?.problems).toEqual([{ field: 'line', problem: 'is not UTF-8' }]);
    expect(JSON.stringify(report)).not.toMatch(/pk_live_|xxxxxxxx/);
  });

  it('cut short after some writes (a ledger entry without its key item, some key items): a second run finishes it, once', async () => {
    const { keys, owner, lines } = oldSystem();
    const path = file(lines);
    const tables = new AdminTables(db);
    // What a run killed mid-batch leaves: the owner's entries written, one key item of them, one other key item.
    const records = lines.map((line) => {
      const parsed = parseImportLine(line, { now, partnerDefaults: PARTNER_DEFAULT_LIMITS });
      if (!parsed.ok) throw new Error('a good line');
      return parsed.value.record;
    });
    await enterImported(tables, owner, [records[0]!, records[5]!], now);
    await tables.createKey(records[0]!);
    await tables.createKey(records[2]!);

    const later = new Date(now.getTime() + 3_600_000);
    const resumed = await importFile({
      file: path,
      dryRun: false,
      ctx: () => adminContext(db, () => later),
      now: later,
      progress: () => {},
    });
    const again = await run(path);

    expect(resumed).toMatchObject({ already_there: 2, to_import: 4, imported: 4 });
    expect(again).toMatchObject({ already_there: 6, to_import: 0, conflict_count: 0 });
    // The key whose entry the cut run wrote keeps that run's creation time.
    expect((await stored(hashApiKey(keys[5]!)))?.created).toBe(now.toISOString());
    const ledger = JSON.parse((await tables.readLedger(owner)).entries) as object;
    expect(Object.keys(ledger)).toHaveLength(3);
  });
});

describe('a DynamoDB that throttles and fails for a while', () => {
  it('the import tries a batch again, and ends with every key written once', async () => {
    const faults = await startFaultProxy({ targetPort: db.server.port });
    try {
      const { keys, lines } = oldSystem();
      let refused = 0;
      // The first ten writes of keys and reads of keys are throttled: more than a call's own three tries.
      faults.setRule(({ headers }) => {
        const target = String(headers['x-amz-target']);
        if (!/\.(PutItem|BatchGetItem)$/.test(target) || refused >= 10) return undefined;
        refused++;
        return { status: 400, body: '{"__type":"x#ThrottlingException","message":"slow down"}' };
      });
      const dynamo = leanDynamo(faults.endpoint);
      const tables = { dynamo, keysTable: db.keysTable, countersTable: db.countersTable };
      try {
        const report = await importFile({
          file: file(lines),
          dryRun: false,
          ctx: () => adminContext(tables, () => now),
          now,
          progress: () => {},
        });

        expect(refused).toBe(10);
        expect(report).toMatchObject({ to_import: 6, imported: 6, conflict_count: 0 });
        for (const key of keys)
          expect((await stored(hashApiKey(key)))?.keyId).toBe(importedKeyId(hashApiKey(key)));
      } finally {
        await dynamo.close();
      }
    } finally {
      await faults.close();
    }
  }, 60_000);
});

describe("the owner's cap", () => {
  it('an owner over the cap comes over whole; new keys are refused it until it holds fewer than the cap', async () => {
    const owner = `big-${randomBytes(4).toString('hex')}`;
    const lines = Array.from({ length: 4 }, () => ({ key: freshKey(), tier: 'free', owner }));
    const env = { ADMIN_MAX_KEYS_PER_OWNER: '3' };
    const ctx = adminContext(db, () => now, env);

    const report = await run(file(lines), { env });
    const refused = await actions.issue(ctx, { owner, tier: 'free', limits: FREE_TIER_LIMITS });
    await actions.revoke(ctx, importedKeyId(hashApiKey(lines[0]!.key)));
    await actions.revoke(ctx, importedKeyId(hashApiKey(lines[1]!.key)));
    const admitted = await actions.issue(ctx, { owner, tier: 'free', limits: FREE_TIER_LIMITS });

    expect(report).toMatchObject({ imported: 4, cap: 3, owners_over_cap: [{ owner, usable_keys: 4 }] });
    expect(refused).toMatchObject({ ok: false, error: { code: 'owner_key_limit_reached' } });
    expect(admitted.ok).toBe(true);
  });

  it('an owner whose ledger would outgrow its item is refused by line, nothing written', async () => {
    const owner = `huge-${randomBytes(4).toString('hex')}`;
    const label = 'L'.repeat(100);
    const lines = Array.from({ length: 1_400 }, () => ({ key: freshKey(), tier: 'free', owner, label }));

    const report = await run(file(lines));

    expect(report).toMatchObject({ refused_count: 1_400, imported: null });
    expect(report.refused).toEqual([
      { line: 1, problems: [{ field: 'owner', problem: expect.stringContaining(owner) }] },
    ]);
    expect(await stored(hashApiKey(lines[0]!.key))).toBeUndefined();
  }, 60_000);
});

describe('npm run keys -- import', () => {
  async function keys(args: string[]) {
    let stdout = '';
    let stderr = '';
    const env = {
      KEYS_TABLE: db.keysTable,
      COUNTERS_TABLE: db.countersTable,
      DYNAMODB_ENDPOINT: db.server.endpoint,
      AWS_REGION: 'us-east-1',
    };
    const code = await main(
      args,
      env,
      { out: (text) => (stdout += `${text}\n`), err: (text) => (stderr += `${text}\n`) },
      now,
    );
    return { code, stdout, stderr };
  }

  it('prints what it will do, then what it did; a refused line exits 2; never a key', async () => {
    const { keys: plain, lines } = oldSystem();
    const path = file(lines);
    const bad = file([lines[0]!, { key: freshKey(), tier: 'gold' }]);

    const dry = await keys(['import', path, '--dry-run']);
    const done = await keys(['import', path]);
    const again = await keys(['import', path, '--json']);
    const refused = await keys(['import', bad]);
    const missing = await keys(['import', join(scratch, 'nope.jsonl')]);

    expect(dry).toMatchObject({ code: 0 });
    expect(dry.stdout).toMatch(
      /^ {2}to import: +6 keys \(1 revoked, 1 expired: they come over refused; 2 partner keys given the default limits\)$/m,
    );
    expect(dry.stdout).toMatch(/^dry run: nothing written$/m);
    expect(done.stdout).toMatch(/^imported 6 keys in [\d.]+ s$/m);
    expect(JSON.parse(again.stdout)).toMatchObject({ to_import: 0, already_there: 6, imported: null });
    expect(refused).toMatchObject({ code: 2 });
    expect(refused.stdout).toContain(
      'refused: 1 line: nothing written\n    line 2: tier must be one of free, partner',
    );
    expect(missing).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('is not a file that can be read'),
    });
    for (const text of [dry, done, again, refused].flatMap((r) => [r.stdout, r.stderr])) {
      for (const key of plain) expect(text).not.toContain(key);
      expect(text).not.toMatch(/pk_live_/);
    }
  });
});
