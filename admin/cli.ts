/**
 * Key administration CLI: `npm run keys -- <command>`. Run with `--help` for the commands.
 * Exit codes: 0 done, 1 failed (unknown key id, DynamoDB fault), 2 usage or configuration error.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { closestMatch } from 'leven';
import { awsRegion, dynamoClient } from '../aws/sdk.js';
import { DependencyError, errorMessage } from '../store/errors.js';
import { FREE_TIER_LIMITS, type Limits, type Tier } from '../tables/keys.js';
import * as actions from './actions.js';
import { AdminTableError, AdminTables } from './dynamo.js';
import { type AdminError, ConfigurationError } from './errors.js';
import { fieldLines, isoSeconds, keyFields, keyTable, limitsText, shownKey } from './output.js';
import { type AdminSettings, adminSettings, partnerDefaults } from './settings.js';
import { createTables } from './tables.js';
import { lastUsed } from './usage.js';
import { checkOwner, type Parsed, Problems, parseIssue, parseRoll } from './validate.js';

const HELP = `Usage: npm run keys -- <command> [options]

The operator's side of key administration: the same actions as the admin API (docs/admin-api.md).

Commands:
  issue --tier free|partner [--owner ID] [--label L] [--minute N --month N] [--expires WHEN]
                     Issue a key. Prints the key ONCE, and its key id. --owner: the application's
                     user or organisation id (counted against ADMIN_MAX_KEYS_PER_OWNER).
                     --minute/--month set partner limits (defaults 600 and 1000000,
                     or PARTNER_LIMIT_MINUTE / PARTNER_LIMIT_MONTH); free-tier limits are fixed.
  list [--owner ID]  List keys (an owner's, or all): key id, owner, tier, status, limits,
                     created, expiry, last use, label. Never keys.
  revoke <key id>    Revoke a key. Says by when every proxy container refuses it
                     (KEY_CACHE_TTL_MS, default 30 s).
  enable <key id>    Make a revoked key active again (same key id, limits and counters).
  limits <key id> [--minute N] [--month N]
                     Change a partner key's limits (free-tier limits are fixed).
  expire <key id> --at WHEN | --never
                     From WHEN on the key is refused like a revoked one (401 invalid_key);
                     --never removes the expiry.
  roll <key id> [--old-expires WHEN]
                     A new key for the same owner, tier, limits and label; the old key expires
                     at WHEN (default 24h, at most 30d). Prints the new key ONCE.
  usage <key id>     Requests counted this minute and month (UTC), per day of this and last
                     month, and the last use.
  owner <key id> <owner>
                     Give a key issued before owners existed its owner.
  create-tables      Create the keys and counters tables if missing (local servers).

WHEN is a UTC date (2026-12-31, midnight UTC), a time with its zone (2026-12-31T18:00:00Z,
2026-12-31T19:00+01:00), a duration from now (90d, 12h, 30m) or now.

Options:
  --json             Machine-readable output (one JSON document; the same field names as the text).
  --help             This text.
  --version          The package's version and Node.js's.

Environment:
  KEYS_TABLE, COUNTERS_TABLE   table names (required)
  DYNAMODB_ENDPOINT            e.g. http://127.0.0.1:8000 for a local server; AWS when unset
  AWS_REGION                   AWS region (default us-east-1)
  PARTNER_LIMIT_MINUTE, PARTNER_LIMIT_MONTH   partner defaults (600, 1000000)
  ADMIN_MAX_KEYS_PER_OWNER     usable keys an owner may hold (10)
  KEY_CACHE_TTL_MS, KEY_NEGATIVE_CACHE_TTL_MS the proxy's key cache (30000, 10000), for the
                                              "takes effect by" times; set them as the stack does
`;

class UsageError extends Error {}

type Env = Record<string, string | undefined>;

/** Every option, and which commands take it (`json`, `help` and `version`: all). */
const OPTIONS = {
  tier: { type: 'string' },
  owner: { type: 'string' },
  label: { type: 'string' },
  minute: { type: 'string' },
  month: { type: 'string' },
  expires: { type: 'string' },
  at: { type: 'string' },
  never: { type: 'boolean' },
  'old-expires': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
  version: { type: 'boolean' },
} as const;
type Options = {
  [name in keyof typeof OPTIONS]?: (typeof OPTIONS)[name]['type'] extends 'string' ? string : boolean;
};

/** Each command: the options it takes and the positional arguments after it. */
const COMMANDS: Record<string, { options: readonly (keyof typeof OPTIONS)[]; args: readonly string[] }> = {
  issue: { options: ['tier', 'owner', 'label', 'minute', 'month', 'expires'], args: [] },
  list: { options: ['owner'], args: [] },
  revoke: { options: [], args: ['key id'] },
  enable: { options: [], args: ['key id'] },
  limits: { options: ['minute', 'month'], args: ['key id'] },
  expire: { options: ['at', 'never'], args: ['key id'] },
  roll: { options: ['old-expires'], args: ['key id'] },
  usage: { options: [], args: ['key id'] },
  owner: { options: [], args: ['key id', 'owner'] },
  'create-tables': { options: [], args: [] },
};
const EVERY_COMMAND: readonly (keyof typeof OPTIONS)[] = ['json', 'help', 'version'];

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

/** A parser's problems as one usage error: "--owner may hold letters…". */
function checked<T>(parsed: Parsed<T>, flags: Record<string, string> = {}): T {
  if (parsed.ok) return parsed.value;
  throw new UsageError(
    parsed.problems.map(({ field, problem }) => `${flags[field] ?? `--${field}`} ${problem}`).join('; '),
  );
}

interface Admin {
  tables: AdminTables;
  settings: AdminSettings;
  /** For messages: "in us-east-1", plus the endpoint when it is not AWS's. */
  where: string;
}

function adminFrom(env: Env): Admin {
  const settings = adminSettings(env);
  const endpoint = env.DYNAMODB_ENDPOINT?.trim() || undefined;
  if (endpoint && !URL.canParse(endpoint)) throw new ConfigurationError('DYNAMODB_ENDPOINT is not a URL');
  const region = awsRegion(env.AWS_REGION?.trim() || undefined);
  return {
    settings,
    tables: new AdminTables({
      client: dynamoClient({ endpoint, region }),
      keysTable: settings.keysTable,
      countersTable: settings.countersTable,
    }),
    where: `in ${region}${endpoint ? ` at ${endpoint}` : ''}`,
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
  if (error instanceof AdminTableError) {
    return new DependencyError(
      error.dependency,
      `DynamoDB table ${error.table} ${admin.where}: ${error.reason}, while ${error.action}`,
      { cause: error },
    );
  }
  const { name, message, $metadata } = error as { name?: string; message?: string; $metadata?: unknown };
  if ($metadata === undefined) return error;
  // An SDK error outside the admin tables' calls (create-tables touches both tables).
  return new DependencyError(
    'keys',
    `DynamoDB tables ${admin.tables.keysTable} and ${admin.tables.countersTable} ${admin.where}: ${message} (${name})`,
    { cause: error },
  );
}

/** The command and its arguments, all checked before anything is connected to. */
type Request =
  | { command: 'issue'; body: Record<string, unknown>; owner: string | undefined }
  | { command: 'list'; owner: string | undefined }
  | { command: 'create-tables' }
  | { command: 'revoke' | 'enable' | 'usage'; keyId: string }
  | { command: 'limits'; keyId: string; limits: Partial<Limits> }
  | { command: 'expire'; keyId: string; expires: Date | null }
  | { command: 'roll'; keyId: string; oldExpires: Date }
  | { command: 'owner'; keyId: string; owner: string };

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
  const args = positionals.slice(1);
  if (args.length !== spec.args.length) {
    throw new UsageError(
      spec.args.length === 0
        ? `${command} takes no positional arguments`
        : spec.args.length === 1
          ? `${command} takes exactly one ${spec.args[0]}`
          : `${command} takes ${spec.args.join(' and ')}`,
    );
  }
  const keyId = args[0] ?? '';
  const owner = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const problems = new Problems();
    const valid = checkOwner(value, flag, problems);
    if (!valid) throw new UsageError(problems.list.map((p) => `${p.field} ${p.problem}`).join('; '));
    return valid;
  };
  switch (command) {
    case 'issue': {
      if (options.tier !== 'free' && options.tier !== 'partner')
        throw new UsageError('--tier must be free or partner');
      const minute = positive('minute', options.minute);
      const month = positive('month', options.month);
      if (options.tier === 'free' && (minute !== undefined || month !== undefined)) {
        throw new UsageError(
          `free-tier limits are fixed (${limitsText(FREE_TIER_LIMITS)}); use --tier partner`,
        );
      }
      const expires =
        options.expires === undefined ? undefined : parseWhen('--expires', options.expires, now);
      if (expires && expires <= now) throw new UsageError('--expires must be in the future');
      const body = {
        ...(options.owner !== undefined && { owner: owner('--owner', options.owner) }),
        tier: options.tier as Tier,
        ...(options.label?.trim() && { label: options.label.trim() }),
        ...((minute !== undefined || month !== undefined) && {
          limits: { ...(minute !== undefined && { minute }), ...(month !== undefined && { month }) },
        }),
        ...(expires && { expires: expires.toISOString() }),
      };
      // The API's own checks (bounds, lengths), with the CLI's flag names.
      checked(parseIssue(body, now, partnerDefaults(env), { ownerRequired: false }), {
        'limits.minute': '--minute',
        'limits.month': '--month',
      });
      return { command, body, owner: body.owner };
    }
    case 'list':
      return { command, owner: owner('--owner', options.owner) };
    case 'limits': {
      const minute = positive('minute', options.minute);
      const month = positive('month', options.month);
      if (minute === undefined && month === undefined)
        throw new UsageError('limits needs --minute, --month or both');
      return {
        command,
        keyId,
        limits: { ...(minute !== undefined && { minute }), ...(month !== undefined && { month }) },
      };
    }
    case 'expire': {
      if ((options.at === undefined) === (options.never !== true))
        throw new UsageError('expire needs exactly one of --at WHEN and --never');
      return { command, keyId, expires: options.never ? null : parseWhen('--at', options.at!, now) };
    }
    case 'roll': {
      const at = options['old-expires'];
      const when = at === undefined ? undefined : parseWhen('--old-expires', at, now).toISOString();
      const input = checked(parseRoll(when === undefined ? {} : { old_key_expires: when }, now), {
        old_key_expires: '--old-expires',
      });
      return { command, keyId, oldExpires: input.oldKeyExpires };
    }
    case 'owner':
      return { command, keyId, owner: owner('owner', args[1])! };
    case 'revoke':
    case 'enable':
    case 'usage':
      return { command, keyId };
    default:
      return { command: 'create-tables' };
  }
}

interface Output {
  /** Print `json` with --json, else `text`. */
  print(json: unknown, text: string): void;
  err(text: string): void;
}

/** An action's refusal: exit 1 for an unknown key id (as before), 2 for what the operator asked. */
function refused(error: AdminError, io: Output): number {
  io.err(
    error.code === 'key_not_found'
      ? error.message.replace(/^No key (\S+)\.$/, 'no key with id $1')
      : `error: ${error.message}`,
  );
  return error.code === 'key_not_found' ? 1 : 2;
}

async function execute(wanted: Request, admin: Admin, now: Date, io: Output): Promise<number> {
  const { print, err } = io;
  const { settings, tables } = admin;
  const ctx: actions.AdminContext = { tables, settings, now: () => now };
  switch (wanted.command) {
    case 'issue': {
      const input = checked(parseIssue(wanted.body, now, settings.partnerDefaults, { ownerRequired: false }));
      const outcome = await actions.issue(ctx, input);
      if (!outcome.ok) return refused(outcome.error, io);
      const key = outcome.key!;
      const shown = shownKey(outcome.record, now);
      print({ key, ...shown }, fieldLines([['key', key], ...keyFields(shown)]));
      err('Store the key now: it is shown once and cannot be recovered (only its SHA-256 hash is stored).');
      if (!wanted.owner) err('It has no owner: give it one with npm run keys -- owner <key id> <owner>.');
      return 0;
    }
    case 'list': {
      let all = wanted.owner ? [] : await tables.allKeys();
      for (let cursor: { created: string; keyId: string } | undefined, more = Boolean(wanted.owner); more; ) {
        const page = await actions.list(ctx, { owner: wanted.owner!, limit: 100, ...(cursor && { cursor }) });
        if (!page.ok) return refused(page.error, io);
        all = [...all, ...page.records];
        cursor = page.next && { created: page.next.created, keyId: page.next.keyId };
        more = cursor !== undefined;
      }
      const used = await lastUsed(
        tables,
        all.map((record) => record.keyId),
        now,
      );
      const keys = all.map((record) => shownKey(record, now, used.lastUsed.get(record.keyId) ?? null));
      print(
        keys,
        keys.length
          ? `${keyTable(keys)}\n(last_used: the last counted request since ${used.since})`
          : 'no keys',
      );
      return 0;
    }
    case 'revoke': {
      const outcome = await actions.revoke(ctx, wanted.keyId);
      if (!outcome.ok) return refused(outcome.error, io);
      print(
        {
          key_id: wanted.keyId,
          status: 'revoked',
          already_revoked: outcome.already,
          refused_by: isoSeconds(outcome.effectiveBy),
        },
        outcome.already
          ? `${wanted.keyId} was already revoked`
          : `${wanted.keyId} revoked: refused (401 invalid_key) by every proxy container ${within(settings.keyCacheTtlMs, now)} (KEY_CACHE_TTL_MS)`,
      );
      return 0;
    }
    case 'enable': {
      const outcome = await actions.enable(ctx, wanted.keyId);
      if (!outcome.ok) return refused(outcome.error, io);
      const { expired } = outcome;
      print(
        {
          key_id: wanted.keyId,
          status: 'active',
          already_active: outcome.already,
          expired,
          accepted_by: expired ? null : isoSeconds(outcome.effectiveBy),
        },
        expired
          ? `${wanted.keyId} ${outcome.already ? 'was already active' : 'enabled'}, but its expiry ` +
              `${outcome.record.expires} has passed: still refused (401 invalid_key)`
          : outcome.already
            ? `${wanted.keyId} was already active`
            : `${wanted.keyId} enabled: accepted by every proxy container ${within(settings.negativeTtlMs, now)} (KEY_NEGATIVE_CACHE_TTL_MS)`,
      );
      if (expired) err(`to accept it: npm run keys -- expire ${wanted.keyId} --never (or --at a later time)`);
      return 0;
    }
    case 'limits': {
      const outcome = await actions.setLimits(ctx, wanted.keyId, wanted.limits);
      if (!outcome.ok && outcome.error.code === 'invalid_request') {
        err(
          `${wanted.keyId} is a free-tier key: its limits are fixed (${limitsText(FREE_TIER_LIMITS)}); ` +
            'issue a partner key (issue --tier partner --minute N --month N) and revoke this one',
        );
        return 2;
      }
      if (!outcome.ok) return refused(outcome.error, io);
      print(
        {
          ...shownKey(outcome.record, now),
          previous_limits: outcome.previous,
          applied_by: isoSeconds(outcome.effectiveBy),
        },
        `${wanted.keyId} limits: ${limitsText(outcome.record.limits)} (were ${limitsText(outcome.previous)}); ` +
          `used by every proxy container ${within(settings.keyCacheTtlMs, now)} (KEY_CACHE_TTL_MS)`,
      );
      return 0;
    }
    case 'expire': {
      const outcome = await actions.setExpiry(ctx, wanted.keyId, { expires: wanted.expires });
      if (!outcome.ok) return refused(outcome.error, io);
      if (wanted.expires === null) {
        print(
          { key_id: wanted.keyId, expires: null, status: outcome.record.status },
          `${wanted.keyId} never expires` +
            (outcome.record.status === 'active'
              ? ` (if it was refused for its expiry: accepted again by every proxy container by ${isoSeconds(outcome.effectiveBy)})`
              : ' (it is revoked: enable it to accept it again)'),
        );
        return 0;
      }
      print(
        {
          key_id: wanted.keyId,
          expires: outcome.record.expires,
          refused_by: isoSeconds(outcome.effectiveBy),
        },
        `${wanted.keyId} expires at ${outcome.record.expires}: refused (401 invalid_key) by every proxy container from ${isoSeconds(outcome.effectiveBy)} on`,
      );
      return 0;
    }
    case 'roll': {
      const outcome = await actions.roll(ctx, wanted.keyId, { oldKeyExpires: wanted.oldExpires });
      if (!outcome.ok) return refused(outcome.error, io);
      const key = outcome.key!;
      const shown = shownKey(outcome.record, now);
      print(
        { key, ...shown, old_key: shownKey(outcome.old, now) },
        fieldLines([
          ['key', key],
          ...keyFields(shown),
          ['old key', `${outcome.old.keyId} expires at ${outcome.old.expires}`],
        ]),
      );
      err('Store the new key now: it is shown once. Both keys work until the old one expires.');
      return 0;
    }
    case 'owner': {
      const outcome = await actions.assignOwner(ctx, wanted.keyId, wanted.owner);
      if (!outcome.ok) return refused(outcome.error, io);
      print(
        shownKey(outcome.record, now),
        outcome.already
          ? `${wanted.keyId} already belongs to ${wanted.owner}`
          : `${wanted.keyId} now belongs to ${wanted.owner}`,
      );
      return 0;
    }
    case 'usage': {
      const outcome = await actions.usage(ctx, wanted.keyId);
      if (!outcome.ok) return refused(outcome.error, io);
      const { record, minute, minuteCount, lastUsed: used, current, previous } = outcome.usage;
      const shown = shownKey(record, now, used);
      const minuteIso = isoSeconds(minute * 1000);
      const dayText = (days: { date: string; count: number }[]) =>
        days
          .filter((day) => day.count > 0)
          .map((day) => `${day.date.slice(8)}: ${day.count}`)
          .join(', ') || 'none';
      print(
        {
          ...shown,
          month: current.month,
          month_count: current.count,
          minute: minuteIso,
          minute_count: minuteCount,
          months: [previous, current],
        },
        fieldLines([
          ...keyFields(shown),
          [
            'month',
            `${current.month}: ${current.count} of ${record.limits.month} used, ${Math.max(0, record.limits.month - current.count)} remaining`,
          ],
          ['minute', `${minuteIso}: ${minuteCount} of ${record.limits.minute} used`],
          ['last_used', used ?? 'no counted request since the first of last month'],
          [`days ${current.month}`, dayText(current.days)],
          [`days ${previous.month}`, dayText(previous.days)],
        ]),
      );
      return 0;
    }
    default: {
      const result = await createTables(tables.client, tables);
      print(
        result,
        `tables ready (created: ${result.created.join(', ') || 'none'}; owner index ${result.ownerIndex}; TTL ${result.ttl})`,
      );
      return 0;
    }
  }
}

/** `--version`: the package's version and the Node.js running it. */
function version(): string {
  const { version: ours } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return `catalogue-read-api ${ours} (keys CLI), Node.js ${process.version}`;
}

async function run(argv: string[], env: Env, io: Io, now: Date): Promise<number> {
  const { command, options, positionals } = parse(argv);
  if (options.version) {
    io.out(
      options.json ? JSON.stringify({ version: version().split(' ')[1], node: process.version }) : version(),
    );
    return 0;
  }
  if (options.help || !command) {
    io.out(HELP);
    return options.help ? 0 : 2;
  }
  // Every argument is checked before anything is connected to.
  const wanted = request(command, options, positionals, env, now);
  const admin = adminFrom(env);
  const print = (json: unknown, text: string) => io.out(options.json ? JSON.stringify(json, null, 2) : text);
  try {
    return await execute(wanted, admin, now, { print, err: io.err });
  } catch (error) {
    throw located(error, admin);
  } finally {
    admin.tables.client.destroy();
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
  err(`error: ${errorMessage(error)}`);
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
