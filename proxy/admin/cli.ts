/**
 * Key administration CLI: `npm run keys -- <command>`. Run with `--help` for the commands.
 * Exit codes: 0 done, 1 failed (unknown key id, DynamoDB fault), 2 usage or configuration error.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { awsRegion, dynamoClient, silenceSdkNodeVersionWarning } from '../../aws/sdk.js';
import { DependencyError } from '../../store/errors.js';
import { ConfigurationError } from '../errors.js';
import type { KeyRecord, Limits, Tier } from '../keys/interface.js';
import {
  type AdminOptions,
  issueKey,
  listKeys,
  partnerDefaults,
  revokeKey,
  TableError,
  usage,
} from './keys.js';
import { createTables } from './tables.js';

const HELP = `Usage: npm run keys -- <command> [options]

Commands:
  issue --tier free|partner [--label L] [--minute N --month N]
                     Issue a key. Prints the key ONCE, and its key id.
                     --minute/--month set partner limits (defaults 600 and 1000000,
                     or PARTNER_LIMIT_MINUTE / PARTNER_LIMIT_MONTH); free-tier limits are fixed.
  list               List keys: key id, tier, status, limits, created, label. Never keys.
  revoke <key id>    Revoke a key; the proxy refuses it within its key cache TTL.
  usage <key id>     Requests counted in the current calendar month and minute (UTC).
  create-tables      Create the keys and counters tables if missing (local servers).

Options:
  --json             Machine-readable output (one JSON document).
  --help             This text.

Environment:
  KEYS_TABLE, COUNTERS_TABLE   table names (required)
  DYNAMODB_ENDPOINT            e.g. http://127.0.0.1:8000 for a local server; AWS when unset
  AWS_REGION                   AWS region (default us-east-1)
  PARTNER_LIMIT_MINUTE, PARTNER_LIMIT_MONTH   partner defaults (600, 1000000)
`;

class UsageError extends Error {}

type Env = Record<string, string | undefined>;
type Options = ReturnType<typeof parse>['values'];

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tier: { type: 'string' },
      label: { type: 'string' },
      minute: { type: 'string' },
      month: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
}

function positive(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new UsageError(`--${flag} must be a positive integer`);
  }
  return Number(raw);
}

interface Admin extends AdminOptions {
  /** For messages: "in us-east-1", plus the endpoint when it is not AWS's. */
  where: string;
}

function adminFrom(env: Env): Admin {
  const required = (name: string) => {
    const value = env[name]?.trim();
    if (!value) throw new ConfigurationError(`${name} is not set`);
    return value;
  };
  const endpoint = env.DYNAMODB_ENDPOINT?.trim() || undefined;
  if (endpoint && !URL.canParse(endpoint)) throw new ConfigurationError('DYNAMODB_ENDPOINT is not a URL');
  const region = awsRegion(env.AWS_REGION?.trim() || undefined);
  return {
    keysTable: required('KEYS_TABLE'),
    countersTable: required('COUNTERS_TABLE'),
    client: dynamoClient({ endpoint, region }),
    where: `in ${region}${endpoint ? ` at ${endpoint}` : ''}`,
  };
}

/**
 * A DynamoDB failure as the operator needs it: which table, which region (and endpoint), the service's
 * answer, e.g. "DynamoDB table catalogue-keys in us-east-1: Requested resource not found
 * (ResourceNotFoundException), while listing keys".
 */
function located(error: unknown, admin: Admin): unknown {
  if (error instanceof TableError) {
    return new DependencyError(
      error.dependency,
      `DynamoDB table ${error.table} ${admin.where}: ${error.reason}, while ${error.action}`,
      { cause: error },
    );
  }
  const { name, message, $metadata } = error as { name?: string; message?: string; $metadata?: unknown };
  if ($metadata === undefined) return error;
  // An SDK error outside the admin functions (create-tables touches both tables).
  return new DependencyError(
    'keys',
    `DynamoDB tables ${admin.keysTable} and ${admin.countersTable} ${admin.where}: ${message} (${name})`,
    { cause: error },
  );
}

function issueLimits(tier: Tier, options: Options, env: Env): Limits | undefined {
  const minute = positive('minute', options.minute);
  const month = positive('month', options.month);
  if (tier === 'free') {
    if (minute !== undefined || month !== undefined) {
      throw new UsageError('free-tier limits are fixed (60/minute, 5000/month); use --tier partner');
    }
    return undefined;
  }
  const defaults = partnerDefaults(env);
  return { minute: minute ?? defaults.minute, month: month ?? defaults.month };
}

const limitsText = (limits: Limits) => `${limits.minute}/minute, ${limits.month}/month`;

function table(records: Omit<KeyRecord, 'keyHash'>[]): string {
  const rows = [
    ['KEY ID', 'TIER', 'STATUS', 'PER MINUTE', 'PER MONTH', 'CREATED', 'LABEL'],
    ...records.map((r) => [
      r.keyId,
      r.tier,
      r.status,
      String(r.limits.minute),
      String(r.limits.month),
      r.created,
      r.label ?? '',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A key id as the operator types it; anything else cannot be one and is a usage error. */
function keyIdArgument(positionals: string[], command: string): string {
  const keyId = positionals[1];
  if (!keyId || positionals.length > 2) throw new UsageError(`${command} takes exactly one key id`);
  return keyId;
}

async function run(argv: string[], env: Env, out: (text: string) => void, err: (text: string) => void) {
  const { values: options, positionals } = parse(argv);
  const command = positionals[0];
  if (options.help || !command) {
    out(HELP);
    return options.help ? 0 : 2;
  }
  if (!['issue', 'list', 'revoke', 'usage', 'create-tables'].includes(command)) {
    throw new UsageError(`unknown command: ${command}`);
  }
  if (command !== 'issue' && (options.tier || options.label || options.minute || options.month)) {
    throw new UsageError(`${command} takes no --tier, --label, --minute or --month`);
  }
  const print = (json: unknown, text: string) => out(options.json ? JSON.stringify(json, null, 2) : text);
  // Validate every argument before connecting to anything.
  let tier: Tier | undefined;
  let limits: Limits | undefined;
  let keyId = '';
  if (command === 'issue') {
    if (options.tier !== 'free' && options.tier !== 'partner')
      throw new UsageError('--tier must be free or partner');
    if (positionals.length > 1) throw new UsageError('issue takes no positional arguments');
    tier = options.tier;
    limits = issueLimits(tier, options, env);
  } else if (command === 'revoke' || command === 'usage') {
    keyId = keyIdArgument(positionals, command);
  }
  const admin = adminFrom(env);
  try {
    if (command === 'issue') {
      const label = options.label?.trim() || undefined;
      const { key, record } = await issueKey(admin, { tier: tier!, ...(label ? { label } : {}), limits });
      const { keyHash: _hash, ...shown } = record;
      print(
        { key, ...shown },
        [`key:    ${key}`, `key id: ${record.keyId}`, `tier:   ${record.tier} (${limitsText(record.limits)})`]
          .concat(record.label ? [`label:  ${record.label}`] : [])
          .join('\n'),
      );
      err('Store the key now: it is shown once and cannot be recovered (only its SHA-256 hash is stored).');
      return 0;
    }
    if (command === 'list') {
      const records = (await listKeys(admin)).map(({ keyHash: _hash, ...shown }) => shown);
      print(records, records.length ? table(records) : 'no keys');
      return 0;
    }
    if (command === 'revoke') {
      const outcome = await revokeKey(admin, keyId);
      if (!outcome.ok) {
        err(`no key with id ${keyId}`);
        return 1;
      }
      const note = outcome.alreadyRevoked ? 'was already revoked' : 'revoked';
      print({ keyId, status: 'revoked', alreadyRevoked: outcome.alreadyRevoked }, `${keyId} ${note}`);
      return 0;
    }
    if (command === 'usage') {
      const outcome = await usage(admin, keyId);
      if (!outcome.ok) {
        err(`no key with id ${keyId}`);
        return 1;
      }
      const { record, month, monthCount, minute, minuteCount } = outcome.usage;
      const minuteIso = new Date(minute * 1000).toISOString().replace('.000Z', 'Z');
      print(
        {
          keyId,
          tier: record.tier,
          status: record.status,
          limits: record.limits,
          month,
          monthCount,
          minute,
          minuteCount,
        },
        [
          `key id: ${keyId} (${record.tier}, ${record.status})`,
          `month ${month}: ${monthCount} of ${record.limits.month} used, ${Math.max(0, record.limits.month - monthCount)} remaining`,
          `minute ${minuteIso}: ${minuteCount} of ${record.limits.minute} used`,
        ].join('\n'),
      );
      return 0;
    }
    const result = await createTables(admin.client, admin);
    print(result, `tables ready (created: ${result.created.join(', ') || 'none'}; TTL ${result.ttl})`);
    return 0;
  } catch (error) {
    throw located(error, admin);
  } finally {
    admin.client.destroy();
  }
}

/** Exit code for an error: 2 for what the operator typed or configured, 1 for faults. */
function report(error: unknown, err: (text: string) => void): number {
  if (
    error instanceof UsageError ||
    error instanceof ConfigurationError ||
    (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  ) {
    err(`error: ${(error as Error).message}\n(run with --help for usage)`);
    return 2;
  }
  if (error instanceof DependencyError) {
    err(`error: ${error.message}`);
    return 1;
  }
  err(`error: ${(error as Error).message ?? String(error)}`);
  return 1;
}

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/**
 * Run one CLI command; resolves to the exit code (never throws).
 * @example process.exitCode = await main(['list'], process.env, { out: console.log, err: console.error });
 */
export function main(argv: string[], env: Env, io: Io): Promise<number> {
  return run(argv, env, io.out, io.err).catch((error: unknown) => report(error, io.err));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  silenceSdkNodeVersionWarning();
  process.exitCode = await main(process.argv.slice(2), process.env, {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  });
}
