import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../admin/cli.js';
import { IN_FLIGHT_MS } from '../../admin/ledger.js';
import { DynamoQuotaMeter } from '../../proxy/quota/dynamo.js';
import { API_KEY_PATTERN } from '../../tables/keys.js';
import { findKey } from '../helpers/admin.js';
import { KEY, KEY_SHAPES } from '../helpers/admin-findings.js';
import { type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';
import { startFaultProxy } from '../helpers/fault-proxy.js';

const root = join(import.meta.dirname, '..', '..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');

let db: DynamoFixture;

beforeAll(async () => {
  db = await dynamoFixture();
});
afterAll(async () => {
  await db?.dispose();
});

/** `npm run keys -- …`, exactly as documented; resolves to stdout. */
async function npmKeys(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'keys', '--', ...args], {
    cwd: root,
    env: { ...process.env, ...environment() },
  });
  return stdout;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function environment(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    KEYS_TABLE: db.keysTable,
    COUNTERS_TABLE: db.countersTable,
    DYNAMODB_ENDPOINT: db.server.endpoint,
    AWS_REGION: 'us-east-1',
  };
}

/** Run the CLI as a child process, as an operator would (slow: reserved for the end-to-end path). */
async function keys(args: string[], env: Record<string, string> = {}): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(tsx, ['admin/cli.ts', ...args], {
      cwd: root,
      env: { ...environment(), ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

/** Run the CLI's main() in this process: same code and output, without a process start per case. */
async function keysInProcess(
  args: string[],
  env: Record<string, string> = {},
  now: Date = new Date(),
): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await main(
    args,
    { ...environment(), ...env },
    {
      out: (text) => {
        stdout += `${text}\n`;
      },
      err: (text) => {
        stderr += `${text}\n`;
      },
    },
    now,
  );
  return { code, stdout, stderr };
}

describe('keys CLI', () => {
  it('end to end as child processes: issue prints the key once, list/usage/revoke never show it', async () => {
    // Act
    const issued = await keys(['issue', '--tier', 'free', '--label', 'cli test']);
    const key = /^key: +(\S+)$/m.exec(issued.stdout)?.[1] ?? '';
    const keyId = /^key_id: +(\S+)$/m.exec(issued.stdout)?.[1] ?? '';
    const [listed, used] = await Promise.all([npmKeys(['list']), keys(['usage', keyId])]);
    const revoked = await keys(['revoke', keyId]);
    const listedAfter = await keysInProcess(['list', '--json']);

    // Assess
    expect(issued).toMatchObject({ code: 0, stderr: expect.stringContaining('shown once') });
    // The repository runs on a Node.js line the AWS SDK supports: no support notice.
    expect(issued.stderr).not.toContain('NodeVersionSupportWarning');
    expect(key).toMatch(API_KEY_PATTERN);
    expect(keyId).toMatch(/^key_[A-Za-z0-9]{10}$/);
    expect(issued.stdout).toMatch(/^tier: +free$/m);
    expect(issued.stdout).toMatch(/^limits: +60\/minute, 5000\/month$/m);
    expect(listed).toMatch(/^key_id +owner +tier +status +limits +created +expires +last_used +label$/m);
    expect(listed).toMatch(
      new RegExp(`^${keyId} +- +free +active +60/minute, 5000/month +\\S+ +never +- +cli test$`, 'm'),
    );
    expect(used.stdout).toMatch(/^month: +\d{4}-\d{2}: 0 of 5000 used, 5000 remaining$/m);
    expect(revoked).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        new RegExp(
          `^${keyId} revoked: refused \\(401 invalid_key\\) by every proxy container at once, from \\S+Z: its counters are stopped until \\S+Z, and every key cache drops it within 30 s, by \\S+Z \\(KEY_CACHE_TTL_MS\\)\n$`,
        ),
      ),
    });
    const records = JSON.parse(listedAfter.stdout) as { key_id: string; status: string }[];
    expect(records.find((r) => r.key_id === keyId)?.status).toBe('revoked');
    for (const text of [
      listed,
      used.stdout + used.stderr,
      revoked.stdout + revoked.stderr,
      listedAfter.stdout,
    ]) {
      expect(text).not.toContain(key);
      expect(text).not.toMatch(/pk_live_/);
    }
    // Four CLI processes (each a tsx start: ~1 s idle, ~5 s on a machine at load 18): more than vitest's 30 s there.
  }, 90_000);

  it('issues partner keys with flags, or with the environment defaults', async () => {
    const flagged = await keysInProcess([
      'issue',
      '--tier',
      'partner',
      '--minute',
      '120',
      '--month',
      '50000',
      '--json',
    ]);
    const defaulted = await keysInProcess(['issue', '--tier', 'partner'], { PARTNER_LIMIT_MINUTE: '900' });

    const json = JSON.parse(flagged.stdout) as Record<string, unknown>;
    expect(json.key).toMatch(API_KEY_PATTERN);
    expect(json).toMatchObject({ tier: 'partner', limits: { minute: 120, month: 50000 }, expires: null });
    expect(json.key_id).toMatch(/^key_/);
    expect(json.keyHash).toBeUndefined();
    expect(json.key_hash).toBeUndefined();
    expect(defaulted.stdout).toMatch(/^limits: +900\/minute, 1000000\/month$/m);
  });

  it('answers mistakes with exit code 2 (usage) or 1 (unknown key id), without a stack trace', async () => {
    const help = await keysInProcess(['--help']);
    const badTier = await keysInProcess(['issue', '--tier', 'gold']);
    const freeLimits = await keysInProcess(['issue', '--tier', 'free', '--minute', '1000']);
    const badDefault = await keysInProcess(['issue', '--tier', 'partner'], { PARTNER_LIMIT_MONTH: 'lots' });
    const noTable = await keysInProcess(['list'], { KEYS_TABLE: '' });
    const unknownFlag = await keysInProcess(['list', '--verbose']);
    const unknownCommand = await keysInProcess(['rotate-all']);
    const unknownId = await keysInProcess(['revoke', 'key_nosuchkey0']);
    const noId = await keysInProcess(['usage']);

    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('Usage: npm run keys') });
    expect(badTier).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--tier must be free or partner'),
    });
    expect(freeLimits).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('free-tier limits are fixed'),
    });
    expect(badDefault).toMatchObject({ code: 2, stderr: expect.stringContaining('PARTNER_LIMIT_MONTH') });
    expect(noTable).toMatchObject({ code: 2, stderr: expect.stringContaining('KEYS_TABLE is not set') });
    expect(unknownFlag).toMatchObject({ code: 2, stderr: expect.stringContaining("'--verbose'") });
    expect(unknownCommand).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        'unknown command: rotate-all (commands: issue, list, revoke, id, enable, limits, expire, roll, usage, owner, import, create-tables)',
      ),
    });
    expect(unknownId).toEqual({ code: 1, stdout: '', stderr: 'no key with id key_nosuchkey0\n' });
    expect(noId).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('usage takes exactly one key id'),
    });
  });

  it('reports a DynamoDB fault with exit code 1, naming the table, region and endpoint', async () => {
    const run = await keysInProcess(['list'], { KEYS_TABLE: 'no-such-table', AWS_REGION: 'eu-west-1' });
    const usageRun = await keysInProcess(['usage', 'key_abcdefghij'], { KEYS_TABLE: 'no-such-table' });

    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `error: DynamoDB table no-such-table in eu-west-1 at ${db.server.endpoint}: ` +
        'Requested resource not found (ResourceNotFoundException), while listing keys\n',
    });
    expect(usageRun.stderr).toContain(`DynamoDB table no-such-table in us-east-1 at ${db.server.endpoint}:`);
  });
});

describe('keys CLI: managing a key', () => {
  const now = new Date('2026-11-24T15:31:40Z');
  const issue = async (tier: 'free' | 'partner') => {
    const run = await keysInProcess(['issue', '--tier', tier, '--json'], {}, now);
    return JSON.parse(run.stdout).key_id as string;
  };

  it('answers a mistyped command or option with the closest valid one', async () => {
    const runs = await Promise.all([
      keysInProcess(['revok', 'key_x']),
      keysInProcess(['lst']),
      keysInProcess(['list', '--jsn']),
      keysInProcess(['issue', '--tier', 'free', '--lable', 'x']),
      keysInProcess(['expire', 'key_x', '--at', '2026-13-01']),
      keysInProcess(['limits', 'key_x', '--tier', 'partner']),
      keysInProcess(['expire', 'key_x']),
    ]);

    expect(runs.map((run) => run.code)).toEqual([2, 2, 2, 2, 2, 2, 2]);
    expect(runs.map((run) => run.stderr.split('\n')[0])).toEqual([
      'error: unknown command: revok; did you mean revoke?',
      'error: unknown command: lst; did you mean list?',
      "error: unknown option '--jsn'; did you mean '--json'?",
      "error: unknown option '--lable'; did you mean '--label'?",
      'error: --at 2026-13-01: expected a UTC date (2026-12-31), a time with its zone (2026-12-31T18:00:00Z), a duration (90d, 12h, 30m) or now',
      'error: limits takes no --tier (limits takes --minute, --month)',
      'error: expire needs exactly one of --at WHEN and --never',
    ]);
  });

  it("changes a partner key's limits and says when every container uses them", async () => {
    const keyId = await issue('partner');

    const changed = await keysInProcess(['limits', keyId, '--minute', '1200'], {}, now);
    const json = await keysInProcess(['limits', keyId, '--month', '2000000', '--json'], {}, now);

    expect(changed).toEqual({
      code: 0,
      stdout:
        `${keyId} limits: 1200/minute, 1000000/month (were 600/minute, 1000000/month); ` +
        'used by every proxy container within 30 s, by 2026-11-24T15:32:10Z (KEY_CACHE_TTL_MS)\n',
      stderr: '',
    });
    expect(JSON.parse(json.stdout)).toMatchObject({
      key_id: keyId,
      limits: { minute: 1200, month: 2_000_000 },
      previous_limits: { minute: 1200, month: 1_000_000 },
      applied_by: '2026-11-24T15:32:10Z',
    });
  });

  it('refuses to change the fixed limits of a free key, saying what to do instead', async () => {
    const keyId = await issue('free');

    const run = await keysInProcess(['limits', keyId, '--minute', '1200'], {}, now);

    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain('is a free-tier key: free-tier limits are fixed (60/minute, 5000/month)');
  });

  it('sets an expiry, says from when the key is refused, and removes it again', async () => {
    const keyId = await issue('free');

    const inOneHour = await keysInProcess(['expire', keyId, '--at', '1h'], {}, now);
    const atOnce = await keysInProcess(['expire', keyId, '--at', 'now', '--json'], {}, now);
    const listed = await keysInProcess(['list', '--json'], {}, now);
    const never = await keysInProcess(['expire', keyId, '--never'], {}, now);
    const used = await keysInProcess(['usage', keyId], {}, now);

    expect(inOneHour.stdout).toBe(
      `${keyId} expires at 2026-11-24T16:31:40.000Z: refused (401 invalid_key) by every proxy container from 2026-11-24T16:31:40Z on\n`,
    );
    // Containers that cached the key before the change hold it until their entry ages out (30 s).
    expect(JSON.parse(atOnce.stdout)).toEqual({
      key_id: keyId,
      expires: '2026-11-24T15:31:40.000Z',
      refused_by: '2026-11-24T15:32:10Z',
    });
    const record = (JSON.parse(listed.stdout) as { key_id: string; expires: string | null }[]).find(
      (key) => key.key_id === keyId,
    );
    expect(record?.expires).toBe('2026-11-24T15:31:40.000Z');
    expect(never.stdout).toBe(
      `${keyId} never expires (if it was refused for its expiry: accepted again by every proxy container by 2026-11-24T15:31:50Z)\n`,
    );
    expect(used.stdout).toMatch(/^expires: +never$/m);
  });

  it('issues a key with an expiry', async () => {
    const run = await keysInProcess(
      ['issue', '--tier', 'free', '--expires', '2027-01-01', '--json'],
      {},
      now,
    );
    const past = await keysInProcess(['issue', '--tier', 'free', '--expires', '2020-01-01'], {}, now);

    expect(JSON.parse(run.stdout)).toMatchObject({ expires: '2027-01-01T00:00:00.000Z', status: 'active' });
    expect(past).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--expires must be in the future'),
    });
  });

  it('enables a revoked key again, and says when an expiry still refuses it', async () => {
    const keyId = await issue('free');
    await keysInProcess(['revoke', keyId], {}, now);

    const enabled = await keysInProcess(['enable', keyId], {}, now);
    const again = await keysInProcess(['enable', keyId], {}, now);
    await keysInProcess(['revoke', keyId], {}, now);
    await keysInProcess(['expire', keyId, '--at', '2026-11-01'], {}, now);
    const expired = await keysInProcess(['enable', keyId, '--json'], {}, now);

    expect(enabled).toEqual({
      code: 0,
      stdout: `${keyId} enabled: accepted by every proxy container within 10 s, by 2026-11-24T15:31:50Z (KEY_NEGATIVE_CACHE_TTL_MS)\n`,
      stderr: '',
    });
    expect(again.stdout).toBe(`${keyId} was already active\n`);
    expect(JSON.parse(expired.stdout)).toMatchObject({
      key_id: keyId,
      status: 'active',
      expired: true,
      accepted_by: null,
    });
    expect(expired.stderr).toBe(
      `to accept it: npm run keys -- expire ${keyId} --never (or --at a later time)\n`,
    );
    const text = await keysInProcess(['enable', keyId], {}, now);
    expect(text.stdout).toBe(
      `${keyId} was already active, but its expiry 2026-11-01T00:00:00.000Z has passed: still refused (401 invalid_key)\n`,
    );
  });

  it('follows the cache bounds the stack sets, and refuses a malformed one before connecting', async () => {
    const keyId = await issue('free');

    const run = await keysInProcess(['revoke', keyId], { KEY_CACHE_TTL_MS: '60000' }, now);
    const bad = await keysInProcess(['revoke', keyId], { KEY_CACHE_TTL_MS: '1m' }, now);

    expect(run.stdout).toContain('within 60 s, by 2026-11-24T15:32:40Z');
    expect(bad).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('KEY_CACHE_TTL_MS must be an integer between 0 and 3600000'),
    });
  });

  it('says when a key was last used, from the counters the meter writes anyway', async () => {
    const keyId = await issue('free');
    const record = (await findKey(db, keyId))!;
    await new DynamoQuotaMeter({ transport: db.transport, table: db.countersTable }).meter(
      record,
      new Date('2026-11-24T09:05:31Z'),
    );

    const listed = await keysInProcess(['list', '--json'], {}, now);
    const used = await keysInProcess(['usage', keyId, '--json'], {}, now);
    const text = await keysInProcess(['list'], {}, now);

    const shown = (JSON.parse(listed.stdout) as { key_id: string; last_used: string | null }[]).find(
      (key) => key.key_id === keyId,
    );
    expect(shown?.last_used).toBe('2026-11-24T09:05:00Z');
    expect(JSON.parse(used.stdout)).toMatchObject({
      key_id: keyId,
      month_count: 1,
      last_used: '2026-11-24T09:05:00Z',
    });
    expect(text.stdout).toMatch(new RegExp(`^${keyId} .* 2026-11-24T09:05:00Z`, 'm'));
    expect(text.stdout).toContain('(last_used: the last counted request since 2026-10-01T00:00:00Z)');
  });
});

describe('keys CLI: owners, rolls, per-day usage and --version', () => {
  const now = new Date('2026-11-24T15:31:40Z');

  it("issues for an owner, lists the owner's keys, rolls a key and shows per-day usage, on the admin core", async () => {
    const owner = `cli-${process.pid}`;
    const issued = JSON.parse(
      (await keysInProcess(['issue', '--tier', 'free', '--owner', owner, '--json'], {}, now)).stdout,
    );
    const rolled = await keysInProcess(['roll', issued.key_id, '--old-expires', '2h', '--json'], {}, now);
    const listed = JSON.parse((await keysInProcess(['list', '--owner', owner, '--json'], {}, now)).stdout);
    const used = await keysInProcess(['usage', issued.key_id], {}, now);
    const badOwner = await keysInProcess(['issue', '--tier', 'free', '--owner', 'no spaces please'], {}, now);
    const tooFast = await keysInProcess(['issue', '--tier', 'partner', '--minute', '60001'], {}, now);

    const roll = JSON.parse(rolled.stdout);
    expect(issued).toMatchObject({ owner, key: expect.stringMatching(/^pk_live_/) });
    expect(roll).toMatchObject({
      owner,
      rolled_from: issued.key_id,
      old_key: { key_id: issued.key_id, expires: '2026-11-24T17:31:40.000Z' },
    });
    expect(roll.key).toMatch(/^pk_live_/);
    expect(rolled.stderr).toContain('shown once');
    expect(listed.map((key: { key_id: string }) => key.key_id).sort()).toEqual(
      [issued.key_id, roll.key_id].sort(),
    );
    expect(used.stdout).toMatch(/^days 2026-11: +none$/m);
    expect(used.stdout).toMatch(/^days 2026-10: +none$/m);
    expect(badOwner).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--owner may hold letters, digits'),
    });
    expect(tooFast).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--minute must be an integer from 1 to 60000'),
    });
  });

  it('gives an owner to a key issued without one', async () => {
    const keyId = JSON.parse(
      (await keysInProcess(['issue', '--tier', 'free', '--json'], {}, now)).stdout,
    ).key_id;
    const set = await keysInProcess(['owner', keyId, `legacy-${process.pid}`], {}, now);
    const again = await keysInProcess(['owner', keyId, 'someone-else'], {}, now);
    expect(set).toMatchObject({ code: 0, stdout: `${keyId} now belongs to legacy-${process.pid}\n` });
    expect(again).toMatchObject({ code: 2, stderr: expect.stringContaining('roll it to move it') });
  });

  it("prints its version and Node.js's with --version, without touching any table", async () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const run = await keysInProcess(['--version'], { KEYS_TABLE: '' });
    expect(run).toEqual({
      code: 0,
      stdout: `catalogue-read-api ${version} (keys CLI), Node.js ${process.version}\n`,
      stderr: '',
    });
  });
});

describe('keys CLI: no key echoed, and a deadline on every call', () => {
  it.each(KEY_SHAPES)('refuses %s where a key id or an owner goes, without printing it', async (_, key) => {
    for (const args of [
      ['revoke', key],
      ['usage', key],
      ['list', '--owner', key],
      ['owner', 'key_AAAAAAAAAA', key],
    ]) {
      const run = await keysInProcess(args);
      expect(run.code).toBe(2);
      // (An owner with `%` is refused for that first: either way, never printed.)
      expect(run.stderr).toMatch(/shaped like an API key|may hold letters/);
      expect((run.stdout + run.stderr).toLowerCase()).not.toContain(KEY.slice(9, 29).toLowerCase());
    }
  });

  it("ends a call held past the ledger's window by its deadline, and the held write, landing late, changes nothing", async () => {
    const faults = await startFaultProxy({ targetPort: db.server.port });
    const env = {
      DYNAMODB_ENDPOINT: faults.endpoint,
      ADMIN_MAX_KEYS_PER_OWNER: '1',
      ADMIN_DEADLINE_MS: '2000',
    };
    const start = new Date();
    const later = new Date(start.getTime() + IN_FLIGHT_MS + 1_000);
    const owner = `cli-deadline-${process.pid}`;
    const cli = async (args: string[], now = start) => {
      const run = await keysInProcess([...args, '--json'], env, now);
      return { ...run, json: run.code === 0 ? JSON.parse(run.stdout) : undefined };
    };
    try {
      // Prepare: the owner's one place taken, then freed; the first key's entry dropped for the second.
      const first = (await cli(['issue', '--tier', 'free', '--owner', owner])).json.key_id;
      await cli(['revoke', first]);
      const second = (await cli(['issue', '--tier', 'free', '--owner', owner])).json.key_id;
      await cli(['revoke', second]);
      // Act: enabling the first key, its write held; a window later, an issue takes the place.
      let release = () => {};
      const until = new Promise<void>((resolve) => {
        release = resolve;
      });
      faults.setRule(({ headers, body }) =>
        String(headers['x-amz-target']).endsWith('.UpdateItem') && body.toString().includes('"S":"active"')
          ? { until }
          : undefined,
      );
      const enabling = cli(['enable', first]);
      const held = () => faults.seen.find((seen) => seen.action === 'until');
      await expect.poll(held, { timeout: 10_000 }).toBeDefined();
      faults.setRule(undefined);
      const third = await cli(['issue', '--tier', 'free', '--owner', owner], later);
      const enabled = await Promise.race([
        enabling,
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 15_000)),
      ]);
      release();
      await enabling;
      // The held write reaches dynalite: it is answered (its condition refused it: 400) before the list reads.
      await expect.poll(() => held()?.status, { timeout: 10_000 }).toBe(400);
      const listed = await cli(['list', '--owner', owner], later);

      // Assess: the enable gave up by its deadline; its write, delivered late, was refused by the fence.
      expect(third.code).toBe(0);
      expect(enabled?.code).toBe(1);
      expect(enabled?.stderr).toContain("no answer before the call's deadline");
      const usable = (listed.json as { key_id: string; status: string }[]).filter(
        (k) => k.status === 'active',
      );
      expect(usable.map((k) => k.key_id)).toEqual([third.json.key_id]);
    } finally {
      await faults.close();
    }
  });
});
