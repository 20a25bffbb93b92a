/**
 * Key administration CLI: `npm run keys -- <command>`. Run with `--help` for the commands.
 * Exit codes: 0 done, 1 failed (unknown key id, DynamoDB fault), 2 usage or configuration error.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { closestMatch } from 'leven';
import { awsRegion, dynamoClient } from '../../aws/sdk.js';
import { DependencyError } from '../../store/errors.js';
import { ConfigurationError } from '../errors.js';
import { KEY_CACHE_DEFAULTS } from '../keys/cached.js';
import { keyExpired, type Limits, type Tier } from '../keys/interface.js';
import {
  type AdminOptions,
  enableKey,
  issueKey,
  listKeys,
  partnerDefaults,
  revokeKey,
  setExpiry,
  setLimits,
  TableError,
} from './keys.js';
import { fieldLines, isoSeconds, keyFields, keyTable, limitsText, shownKey } from './output.js';
import { createTables } from './tables.js';
import { lastUsed, usage } from './usage.js';

const HELP = `Usage: npm run keys -- <command> [options]

Commands:
  issue --tier free|partner [--label L] [--minute N --month N] [--expires WHEN]
                     Issue a key. Prints the key ONCE, and its key id.
                     --minute/--month set partner limits (defaults 600 and 1000000,
                     or PARTNER_LIMIT_MINUTE / PARTNER_LIMIT_MONTH); free-tier limits are fixed.
  list               List keys: key id, tier, status, limits, created, expiry, last use, label.
                     Never keys.
  revoke <key id>    Revoke a key. Says by when every proxy container refuses it
                     (KEY_CACHE_TTL_MS, default 30 s).
  enable <key id>    Make a revoked key active again (same key id, limits and counters).
  limits <key id> [--minute N] [--month N]
                     Change a partner key's limits (free-tier limits are fixed).
  expire <key id> --at WHEN | --never
                     From WHEN on the key is refused like a revoked one (401 invalid_key);
                     --never removes the expiry.
  usage <key id>     Requests counted this calendar month and minute (UTC), and the last use.
  create-tables      Create the keys and counters tables if missing (local servers).

WHEN is a UTC date (2026-12-31, midnight UTC), a time with its zone (2026-12-31T18:00:00Z,
2026-12-31T19:00+01:00), a duration from now (90d, 12h, 30m) or now.

Options:
  --json             Machine-readable output (one JSON document; the same field names as the text).
  --help             This text.

Environment:
  KEYS_TABLE, COUNTERS_TABLE   table names (required)
  DYNAMODB_ENDPOINT            e.g. http://127.0.0.1:8000 for a local server; AWS when unset
  AWS_REGION                   AWS region (default us-east-1)
  PARTNER_LIMIT_MINUTE, PARTNER_LIMIT_MONTH   partner defaults (600, 1000000)
  KEY_CACHE_TTL_MS, KEY_NEGATIVE_CACHE_TTL_MS the proxy's key cache (30000, 10000), for the
                                              "takes effect by" times; set them as the stack does
`;

class UsageError extends Error {}

type Env = Record<string, string | undefined>;

/** Every option, and which commands take it (`json` and `help`: all). */
const OPTIONS = {
  tier: { type: 'string' },
  label: { type: 'string' },
  minute: { type: 'string' },
  month: { type: 'string' },
  expires: { type: 'string' },
  at: { type: 'string' },
  never: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;
type Options = {
  [name in keyof typeof OPTIONS]?: (typeof OPTIONS)[name]['type'] extends 'string' ? string : boolean;
};

/** Each command: the options it takes and whether it takes a key id. */
const COMMANDS: Record<string, { options: readonly (keyof typeof OPTIONS)[]; keyId: boolean }> = {
  issue: { options: ['tier', 'label', 'minute', 'month', 'expires'], keyId: false },
  list: { options: [], keyId: false },
  revoke: { options: [], keyId: true },
  enable: { options: [], keyId: true },
  limits: { options: ['minute', 'month'], keyId: true },
  expire: { options: ['at', 'never'], keyId: true },
  usage: { options: [], keyId: true },
  'create-tables': { options: [], keyId: false },
};
const EVERY_COMMAND: readonly (keyof typeof OPTIONS)[] = ['json', 'help'];

/**
 * "; did you mean X?" when one of `candidates` is close enough to a mistyped `input` to be what was meant (two
 * edits, a swap of neighbours included, or a third of its letters for long words; one for words of up to
 * three letters), else ''. Edit distance from `leven`.
 * @example didYouMean('revok', ['issue', 'revoke']) // → '; did you mean revoke?'
 */
function didYouMean(input: string, candidates: readonly string[], format = (match: string) => match): string {
  const maxDistance = input.length <= 3 ? 1 : Math.max(2, Math.floor(input.length / 3));
  const match = closestMatch(input, candidates, { maxDistance });
  return match === undefined ? '' : `; did you mean ${format(match)}?`;
}

/**
 * Parse `argv`, answering a mistyped command or option with the closest valid one. Unknown options are found
 * from the tokens first (Node's own message offers no suggestion); the strict parse then catches the rest.
 */
function parse(argv: string[]): { command: string | undefined; options: Options; positionals: string[] } {
  const { tokens } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const command = tokens.find((token) => token.kind === 'positional')?.value;
  const allowed =
    command && COMMANDS[command] ? [...COMMANDS[command].options, ...EVERY_COMMAND] : Object.keys(OPTIONS);
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name in OPTIONS) continue;
    throw new UsageError(
      `unknown option '${token.rawName}'${didYouMean(token.name, allowed, (name) => `'--${name}'`)}`,
    );
  }
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  return { command: positionals[0], options: values as Options, positionals };
}

function positive(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new UsageError(`--${flag} must be a positive integer`);
  }
  return Number(raw);
}

const DURATION_UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A WHEN of the help text as a time: a UTC date, a time with its zone, a duration from `now`, or `now`.
 * @example parseWhen('--at', '90d', new Date('2026-01-01T00:00:00Z')).toISOString() // → '2026-04-01T00:00:00.000Z'
 */
function parseWhen(flag: string, raw: string, now: Date): Date {
  if (raw === 'now') return now;
  const duration = /^([1-9][0-9]{0,5})([mhd])$/.exec(raw);
  if (duration) return new Date(now.getTime() + Number(duration[1]) * DURATION_UNITS[duration[2]!]!);
  const date = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00Z` : raw;
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(date);
  const time = Date.parse(date);
  if (!zoned || Number.isNaN(time)) {
    throw new UsageError(
      `${flag} ${raw}: expected a UTC date (2026-12-31), a time with its zone (2026-12-31T18:00:00Z), a duration (90d, 12h, 30m) or now`,
    );
  }
  return new Date(time);
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

/** How long the proxy's containers may go on with what they cached: `{ ttlMs, negativeTtlMs }`. */
function cacheBounds(env: Env): { ttlMs: number; negativeTtlMs: number } {
  const read = (name: string, fallback: number) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    if (!/^(0|[1-9][0-9]*)$/.test(raw)) throw new ConfigurationError(`${name} must be a nonnegative integer`);
    return Number(raw);
  };
  const ttlMs = read('KEY_CACHE_TTL_MS', KEY_CACHE_DEFAULTS.ttlMs);
  return {
    ttlMs,
    negativeTtlMs: Math.min(ttlMs, read('KEY_NEGATIVE_CACHE_TTL_MS', KEY_CACHE_DEFAULTS.negativeTtlMs)),
  };
}

/**
 * "within 30 s, by 2026-11-24T15:32:10Z": when every container has dropped what it cached before `now`.
 * @example within(30_000, new Date('2026-11-24T15:31:40Z')) // → 'within 30 s, by 2026-11-24T15:32:10Z'
 */
function within(ms: number, now: Date): string {
  return `within ${Math.ceil(ms / 1000)} s, by ${isoSeconds(now.getTime() + ms)}`;
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

/** The command and its arguments, all checked before anything is connected to. */
type Request =
  | {
      command: 'issue';
      tier: Tier;
      label: string | undefined;
      limits: Limits | undefined;
      expires: Date | undefined;
    }
  | { command: 'list' | 'create-tables' }
  | { command: 'revoke' | 'enable' | 'usage'; keyId: string }
  | { command: 'limits'; keyId: string; minute: number | undefined; month: number | undefined }
  | { command: 'expire'; keyId: string; expires: Date | null };

function request(command: string, options: Options, positionals: string[], env: Env, now: Date): Request {
  const spec = COMMANDS[command];
  if (!spec) {
    throw new UsageError(
      `unknown command: ${command}${didYouMean(command, Object.keys(COMMANDS)) || ` (commands: ${Object.keys(COMMANDS).join(', ')})`}`,
    );
  }
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || EVERY_COMMAND.includes(name as keyof typeof OPTIONS)) continue;
    if (!spec.options.includes(name as keyof typeof OPTIONS)) {
      const takes = spec.options.length
        ? ` (${command} takes ${spec.options.map((o) => `--${o}`).join(', ')})`
        : '';
      throw new UsageError(`${command} takes no --${name}${takes}`);
    }
  }
  let keyId = '';
  if (spec.keyId) {
    keyId = positionals[1] ?? '';
    if (!keyId || positionals.length > 2) throw new UsageError(`${command} takes exactly one key id`);
  } else if (positionals.length > 1) {
    throw new UsageError(`${command} takes no positional arguments`);
  }
  switch (command) {
    case 'issue': {
      if (options.tier !== 'free' && options.tier !== 'partner')
        throw new UsageError('--tier must be free or partner');
      const expires =
        options.expires === undefined ? undefined : parseWhen('--expires', options.expires, now);
      if (expires && expires <= now) throw new UsageError('--expires must be in the future');
      return {
        command,
        tier: options.tier,
        label: options.label?.trim() || undefined,
        limits: issueLimits(options.tier, options, env),
        expires,
      };
    }
    case 'limits': {
      const minute = positive('minute', options.minute);
      const month = positive('month', options.month);
      if (minute === undefined && month === undefined)
        throw new UsageError('limits needs --minute, --month or both');
      return { command, keyId, minute, month };
    }
    case 'expire': {
      if ((options.at === undefined) === (options.never !== true))
        throw new UsageError('expire needs exactly one of --at WHEN and --never');
      return { command, keyId, expires: options.never ? null : parseWhen('--at', options.at!, now) };
    }
    case 'revoke':
    case 'enable':
    case 'usage':
      return { command, keyId };
    default:
      return { command: command as 'list' | 'create-tables' };
  }
}

interface Output {
  /** Print `json` with --json, else `text`. */
  print(json: unknown, text: string): void;
  err(text: string): void;
}

async function execute(wanted: Request, admin: Admin, env: Env, now: Date, io: Output): Promise<number> {
  const { print, err } = io;
  const bounds = cacheBounds(env);
  const noKey = (keyId: string) => {
    err(`no key with id ${keyId}`);
    return 1;
  };
  switch (wanted.command) {
    case 'issue': {
      const { key, record } = await issueKey(admin, {
        tier: wanted.tier,
        ...(wanted.label && { label: wanted.label }),
        ...(wanted.limits && { limits: wanted.limits }),
        ...(wanted.expires && { expires: wanted.expires }),
        now,
      });
      // One write: the key-id index a later lookup would use is only eventually consistent on AWS.
      const shown = shownKey(record);
      print({ key, ...shown }, fieldLines([['key', key], ...keyFields(shown)]));
      err('Store the key now: it is shown once and cannot be recovered (only its SHA-256 hash is stored).');
      return 0;
    }
    case 'list': {
      const records = await listKeys(admin);
      const used = await lastUsed(
        admin,
        records.map((record) => record.keyId),
        now,
      );
      const keys = records.map((record) => shownKey(record, used.lastUsed.get(record.keyId) ?? null));
      print(
        keys,
        keys.length
          ? `${keyTable(keys)}\n(last_used: the last counted request since ${used.since})`
          : 'no keys',
      );
      return 0;
    }
    case 'revoke': {
      const outcome = await revokeKey(admin, wanted.keyId);
      if (!outcome.ok) return noKey(wanted.keyId);
      const by = isoSeconds(now.getTime() + bounds.ttlMs);
      print(
        { key_id: wanted.keyId, status: 'revoked', already_revoked: outcome.alreadyRevoked, refused_by: by },
        outcome.alreadyRevoked
          ? `${wanted.keyId} was already revoked`
          : `${wanted.keyId} revoked: refused (401 invalid_key) by every proxy container ${within(bounds.ttlMs, now)} (KEY_CACHE_TTL_MS)`,
      );
      return 0;
    }
    case 'enable': {
      const outcome = await enableKey(admin, wanted.keyId);
      if (!outcome.ok) return noKey(wanted.keyId);
      const expired = keyExpired(outcome.record, now.getTime());
      const by = isoSeconds(now.getTime() + bounds.negativeTtlMs);
      print(
        {
          key_id: wanted.keyId,
          status: 'active',
          already_active: outcome.alreadyActive,
          expired,
          accepted_by: expired ? null : by,
        },
        expired
          ? `${wanted.keyId} ${outcome.alreadyActive ? 'was already active' : 'enabled'}, but its expiry ` +
              `${outcome.record.expires} has passed: still refused (401 invalid_key)`
          : outcome.alreadyActive
            ? `${wanted.keyId} was already active`
            : `${wanted.keyId} enabled: accepted by every proxy container ${within(bounds.negativeTtlMs, now)} (KEY_NEGATIVE_CACHE_TTL_MS)`,
      );
      if (expired) err(`to accept it: npm run keys -- expire ${wanted.keyId} --never (or --at a later time)`);
      return 0;
    }
    case 'limits': {
      const outcome = await setLimits(admin, wanted.keyId, {
        ...(wanted.minute !== undefined && { minute: wanted.minute }),
        ...(wanted.month !== undefined && { month: wanted.month }),
      });
      if (!outcome.ok && outcome.reason === 'free-tier') {
        err(
          `${wanted.keyId} is a free-tier key: its limits are fixed (60/minute, 5000/month); ` +
            'issue a partner key (issue --tier partner --minute N --month N) and revoke this one',
        );
        return 2;
      }
      if (!outcome.ok) return noKey(wanted.keyId);
      print(
        {
          ...shownKey(outcome.record),
          previous_limits: outcome.previous,
          applied_by: isoSeconds(now.getTime() + bounds.ttlMs),
        },
        `${wanted.keyId} limits: ${limitsText(outcome.record.limits)} (were ${limitsText(outcome.previous)}); ` +
          `used by every proxy container ${within(bounds.ttlMs, now)} (KEY_CACHE_TTL_MS)`,
      );
      return 0;
    }
    case 'expire': {
      const outcome = await setExpiry(admin, wanted.keyId, wanted.expires);
      if (!outcome.ok) return noKey(wanted.keyId);
      if (wanted.expires === null) {
        const by = isoSeconds(now.getTime() + bounds.negativeTtlMs);
        print(
          { key_id: wanted.keyId, expires: null, status: outcome.record.status },
          `${wanted.keyId} never expires` +
            (outcome.record.status === 'active'
              ? ` (if it was refused for its expiry: accepted again by every proxy container by ${by})`
              : ' (it is revoked: enable it to accept it again)'),
        );
        return 0;
      }
      // A container that cached the record before this change goes on with its old expiry until the entry ages out.
      const refusedBy = Math.max(wanted.expires.getTime(), now.getTime() + bounds.ttlMs);
      print(
        { key_id: wanted.keyId, expires: outcome.record.expires, refused_by: isoSeconds(refusedBy) },
        `${wanted.keyId} expires at ${outcome.record.expires}: refused (401 invalid_key) by every proxy container from ${isoSeconds(refusedBy)} on`,
      );
      return 0;
    }
    case 'usage': {
      const outcome = await usage(admin, wanted.keyId, now);
      if (!outcome.ok) return noKey(wanted.keyId);
      const { record, month, monthCount, minute, minuteCount, lastUsed: used } = outcome.usage;
      const shown = shownKey(record, used);
      const minuteIso = isoSeconds(minute * 1000);
      print(
        { ...shown, month, month_count: monthCount, minute: minuteIso, minute_count: minuteCount },
        fieldLines([
          ...keyFields(shown),
          [
            'month',
            `${month}: ${monthCount} of ${record.limits.month} used, ${Math.max(0, record.limits.month - monthCount)} remaining`,
          ],
          ['minute', `${minuteIso}: ${minuteCount} of ${record.limits.minute} used`],
          ['last_used', used ?? 'no counted request since the first of last month'],
        ]),
      );
      return 0;
    }
    default: {
      const result = await createTables(admin.client, admin);
      print(result, `tables ready (created: ${result.created.join(', ') || 'none'}; TTL ${result.ttl})`);
      return 0;
    }
  }
}

async function run(argv: string[], env: Env, io: Io, now: Date): Promise<number> {
  const { command, options, positionals } = parse(argv);
  if (options.help || !command) {
    io.out(HELP);
    return options.help ? 0 : 2;
  }
  // Every argument is checked before anything is connected to.
  const wanted = request(command, options, positionals, env, now);
  cacheBounds(env);
  const admin = adminFrom(env);
  const print = (json: unknown, text: string) => io.out(options.json ? JSON.stringify(json, null, 2) : text);
  try {
    return await execute(wanted, admin, env, now, { print, err: io.err });
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
 * Run one CLI command; resolves to the exit code (never throws). `now` is the clock (tests pin it).
 * @example process.exitCode = await main(['list'], process.env, { out: console.log, err: console.error });
 */
export function main(argv: string[], env: Env, io: Io, now: Date = new Date()): Promise<number> {
  return run(argv, env, io, now).catch((error: unknown) => report(error, io.err));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2), process.env, {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  });
}
