import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../proxy/admin/cli.js';
import { API_KEY_PATTERN } from '../../../proxy/keys/hash.js';
import { type DynamoFixture, dynamoFixture } from '../../helpers/dynamo.js';

const root = join(import.meta.dirname, '..', '..', '..');
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
    const { stdout, stderr } = await promisify(execFile)(tsx, ['proxy/admin/cli.ts', ...args], {
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
async function keysInProcess(args: string[], env: Record<string, string> = {}): Promise<Run> {
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
  );
  return { code, stdout, stderr };
}

describe('keys CLI', () => {
  it('end to end as child processes: issue prints the key once, list/usage/revoke never show it', async () => {
    // Act
    const issued = await keys(['issue', '--tier', 'free', '--label', 'cli test']);
    const key = /^key: +(\S+)$/m.exec(issued.stdout)?.[1] ?? '';
    const keyId = /^key id: +(\S+)$/m.exec(issued.stdout)?.[1] ?? '';
    const [listed, used] = await Promise.all([npmKeys(['list']), keys(['usage', keyId])]);
    const revoked = await keys(['revoke', keyId]);
    const listedAfter = await keysInProcess(['list', '--json']);

    // Assess
    expect(issued).toMatchObject({ code: 0, stderr: expect.stringContaining('shown once') });
    // Silenced as in `npm start` (the AWS SDK's Node 20 notice is not actionable here).
    expect(issued.stderr).not.toContain('NodeVersionSupportWarning');
    expect(key).toMatch(API_KEY_PATTERN);
    expect(keyId).toMatch(/^key_[A-Za-z0-9]{10}$/);
    expect(issued.stdout).toContain('tier:   free (60/minute, 5000/month)');
    expect(listed).toMatch(/^KEY ID +TIER +STATUS/);
    expect(listed).toMatch(new RegExp(`^${keyId} +free +active +60 +5000 .* cli test$`, 'm'));
    expect(used.stdout).toMatch(/^month \d{4}-\d{2}: 0 of 5000 used, 5000 remaining$/m);
    expect(revoked).toMatchObject({ code: 0, stdout: `${keyId} revoked\n` });
    const records = JSON.parse(listedAfter.stdout) as { keyId: string; status: string }[];
    expect(records.find((r) => r.keyId === keyId)?.status).toBe('revoked');
    for (const text of [
      listed,
      used.stdout + used.stderr,
      revoked.stdout + revoked.stderr,
      listedAfter.stdout,
    ]) {
      expect(text).not.toContain(key);
      expect(text).not.toMatch(/pk_live_/);
    }
  });

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

    const json = JSON.parse(flagged.stdout) as {
      key: string;
      keyId: string;
      limits: unknown;
      keyHash?: string;
    };
    expect(json.key).toMatch(API_KEY_PATTERN);
    expect(json).toMatchObject({ tier: 'partner', limits: { minute: 120, month: 50000 } });
    expect(json.keyHash).toBeUndefined();
    expect(defaulted.stdout).toContain('tier:   partner (900/minute, 1000000/month)');
  });

  it('answers mistakes with exit code 2 (usage) or 1 (unknown key id), without a stack trace', async () => {
    const help = await keysInProcess(['--help']);
    const badTier = await keysInProcess(['issue', '--tier', 'gold']);
    const freeLimits = await keysInProcess(['issue', '--tier', 'free', '--minute', '1000']);
    const badDefault = await keysInProcess(['issue', '--tier', 'partner'], { PARTNER_LIMIT_MONTH: 'lots' });
    const noTable = await keysInProcess(['list'], { KEYS_TABLE: '' });
    const unknownFlag = await keysInProcess(['list', '--verbose']);
    const unknownCommand = await keysInProcess(['rotate']);
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
      stderr: expect.stringContaining('unknown command: rotate'),
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
