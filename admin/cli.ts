/**
 * Key administration CLI: `npm run keys -- <command>`. Run with `--help` for the commands.
 * Exit codes: 0 done, 1 failed (unknown key id, DynamoDB fault), 2 usage or configuration error.
 */
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { LeanDynamo } from '../aws/dynamodb.js';
import { DEFAULT_REGION } from '../aws/env.js';
import { awsRegion, dynamoClient, leanDynamo } from '../aws/sdk.js';
import {
  checkOptionsApply,
  findCommand,
  isUsageError,
  optionList,
  parseCommandLine,
  UsageError,
} from '../cli/kit.js';
import { DependencyError, errorMessage } from '../store/errors.js';
import {
  holdsKey,
  type Item,
  KEY_CACHE_DEFAULTS,
  KEY_ID_PATTERN,
  type KeyRecord,
  type Limits,
  type Tier,
} from '../tables/keys.js';
import * as actions from './actions.js';
import { findByKey, revokeByKey } from './by-key.js';
import { AdminTableError, AdminTables, sortKeys } from './dynamo.js';
import { type AdminError, ConfigurationError } from './errors.js';
import { importFile, reportText } from './import/file.js';
import { type KeyInput, readKey } from './key-input.js';
import {
  FREE_TIER_FIXED,
  fieldLines,
  isoSeconds,
  keyFields,
  keyTable,
  limitsText,
  shownKey,
} from './output.js';
import {
  type AdminSettings,
  adminSettings,
  DEFAULT_DEADLINE_MS,
  DEFAULT_MAX_KEYS_PER_OWNER,
  PARTNER_DEFAULT_LIMITS,
  partnerDefaults,
} from './settings.js';
import { createTables } from './tables.js';
import { keysTarget } from './target.js';
import { lastUsed, lastUseSince } from './usage.js';
import {
  BOUNDS,
  checkOwner,
  KEY_PROBLEM,
  type Parsed,
  Problems,
  parseInstant,
  parseIssue,
  parseRoll,
  ROLL_GRACE_DEFAULT_HOURS,
} from './validate.js';

/** The checkout this CLI is part of: the data directory of its npm start is `<root>/.local` (aws/local-stack.ts). */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The help's lines before the commands' and after them: every command brings its own (`COMMANDS`). */
const HELP_HEAD = `Usage: npm run keys -- <command> [options]

The operator's side of key administration: the same actions as the admin API (docs/admin-api.md).

Commands:
`;
const HELP_TAIL = `
WHEN is a UTC date (2026-12-31, midnight UTC), a time with its zone (2026-12-31T18:00:00Z,
2026-12-31T19:00+01:00), a duration from now (90d, 12h, 30m) or now.

Options:
  --json             Machine-readable output (one JSON document; the same field names as the text).
  --help             This text.
  --version          The package's version and Node.js's.

Environment (none of the first three set: the tables of this checkout's running npm start, on its
local DynamoDB, found in its data directory: CATALOGUE_LOCAL_DIR, else .local/):
  KEYS_TABLE, COUNTERS_TABLE   table names (the stack's outputs)
  DYNAMODB_ENDPOINT            e.g. http://127.0.0.1:8000 for a local server; AWS when unset
  AWS_REGION                   AWS region (default ${DEFAULT_REGION})
  PARTNER_LIMIT_MINUTE, PARTNER_LIMIT_MONTH   partner defaults (${PARTNER_DEFAULT_LIMITS.minute}, ${PARTNER_DEFAULT_LIMITS.month})
  ADMIN_MAX_KEYS_PER_OWNER     usable keys an owner may hold (${DEFAULT_MAX_KEYS_PER_OWNER})
  ADMIN_DEADLINE_MS            how long one call may take (${DEFAULT_DEADLINE_MS})
  KEY_CACHE_TTL_MS, KEY_NEGATIVE_CACHE_TTL_MS the proxy's key cache (${KEY_CACHE_DEFAULTS.ttlMs}, ${KEY_CACHE_DEFAULTS.negativeTtlMs}), for the
                                              "takes effect by" times; set them as the stack does
`;

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
  like: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'key-stdin': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
  version: { type: 'boolean' },
} as const;
type OptionName = keyof typeof OPTIONS;
type Options = {
  [name in keyof typeof OPTIONS]?: (typeof OPTIONS)[name]['type'] extends 'string' ? string : boolean;
};

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
  // A date alone is midnight UTC here, as the help says (the API asks for the zone).
  const time = parseInstant(raw, { utcDate: true });
  if (!time) {
    throw new UsageError(
      `${flag} ${raw}: expected a UTC date (2026-12-31), a time with its zone (2026-12-31T18:00:00Z), a duration (90d, 12h, 30m) or now`,
    );
  }
  return time;
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
  dynamo: LeanDynamo;
  settings: AdminSettings;
  endpoint: string | undefined;
  region: string;
  /** For messages: "in us-east-1", plus the endpoint when it is not AWS's. */
  where: string;
}

function adminFrom(env: Env): Admin {
  const settings = adminSettings(env);
  const endpoint = env.DYNAMODB_ENDPOINT?.trim() || undefined;
  if (endpoint && !URL.canParse(endpoint)) throw new ConfigurationError('DYNAMODB_ENDPOINT is not a URL');
  const region = awsRegion(env.AWS_REGION?.trim() || undefined);
  const dynamo = leanDynamo(endpoint, region);
  return {
    settings,
    dynamo,
    tables: new AdminTables({ dynamo, keysTable: settings.keysTable, countersTable: settings.countersTable }),
    endpoint,
    region,
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

interface Output {
  /** Print `json` with --json, else `text`. */
  print(json: unknown, text: string): void;
  err(text: string): void;
  /** The key on standard input (--key-stdin), never shown. */
  key(): Promise<string>;
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

/** What a command is given to check: its options, its positional arguments, the environment and the clock. */
interface Given {
  options: Options;
  args: string[];
  env: Env;
  now: Date;
}

/** What a checked command runs with, once connected. */
interface Session {
  admin: Admin;
  /** The command's one admin call: every table call of it ends by one deadline (ADMIN_DEADLINE_MS). */
  ctx: actions.AdminContext;
  /** A context whose calls end by a deadline of its own: one per page of a listing. */
  page(): actions.AdminContext;
  now: Date;
  io: Output;
}

/**
 * One command of `npm run keys`: its lines of the help, the options it takes (`json`, `help` and `version`: all),
 * its positional arguments, and `check`: every argument checked before anything is connected to, then what to
 * run. A new command is one more entry of `COMMANDS`.
 */
interface KeysCommand {
  help: string;
  options: readonly OptionName[];
  args: readonly string[];
  check(given: Given): (session: Session) => Promise<number>;
}

/** An owner id checked as the API checks it, as a usage error naming `flag`. */
function ownerOption(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const problems = new Problems();
  const valid = checkOwner(value, flag, problems);
  if (!valid) throw new UsageError(problems.list.map((p) => `${p.field} ${p.problem}`).join('; '));
  return valid;
}

/** `--minute` and `--month`, as the limits they set. */
function limitOptions(options: Options): { minute?: number; month?: number } {
  const minute = positive('minute', options.minute);
  const month = positive('month', options.month);
  return { ...(minute !== undefined && { minute }), ...(month !== undefined && { month }) };
}

/** The body of an issue request from its options, checked by the API's own checks with the CLI's flag names. */
function issueBody({ options, env, now }: Given): Record<string, unknown> & { owner?: string } {
  if (options.tier !== 'free' && options.tier !== 'partner')
    throw new UsageError('--tier must be free or partner');
  const limits = limitOptions(options);
  const limited = limits.minute !== undefined || limits.month !== undefined;
  if (options.tier === 'free' && limited) {
    throw new UsageError(`${FREE_TIER_FIXED}; use --tier partner`);
  }
  const expires = options.expires === undefined ? undefined : parseWhen('--expires', options.expires, now);
  if (expires && expires <= now) throw new UsageError('--expires must be in the future');
  const body = {
    ...(options.owner !== undefined && { owner: ownerOption('--owner', options.owner) }),
    tier: options.tier as Tier,
    ...(options.label?.trim() && { label: options.label.trim() }),
    ...(limited && { limits }),
    ...(expires && { expires: expires.toISOString() }),
  };
  checked(parseIssue(body, now, partnerDefaults(env), { ownerRequired: false }), {
    'limits.minute': '--minute',
    'limits.month': '--month',
  });
  return body;
}

/** With `--like <key id>`: the body of an issue request with that key's tier, limits, owner and label. */
function likeBody(record: KeyRecord, { options, now }: Given): Record<string, unknown> & { owner?: string } {
  const expires = options.expires === undefined ? undefined : parseWhen('--expires', options.expires, now);
  const label = options.label?.trim() || record.label;
  return {
    ...(record.owner !== undefined && { owner: record.owner }),
    tier: record.tier,
    ...(label && { label }),
    ...(record.tier === 'partner' && { limits: { ...record.limits } }),
    ...(expires && { expires: expires.toISOString() }),
  };
}

/** The key id of `--like`, checked before anything is connected to; the options it replaces refused. */
function likeOption(options: Options): string | undefined {
  const like = options.like;
  if (like === undefined) return undefined;
  if (holdsKey(like)) throw new UsageError(`--like ${KEY_PROBLEM}; give its key id (key_…)`);
  if (!KEY_ID_PATTERN.test(like))
    throw new UsageError('--like takes a key id (key_ and 10 letters or digits)');
  const taken = (['tier', 'owner', 'minute', 'month'] as const).filter((name) => options[name] !== undefined);
  if (taken.length > 0) {
    throw new UsageError(
      `--like takes the tier, limits and owner of that key: give no ${taken.map((n) => `--${n}`).join(', ')}`,
    );
  }
  return like;
}

const issueCommand: KeysCommand = {
  help: `  issue --tier free|partner [--owner ID] [--label L] [--minute N --month N] [--expires WHEN]
                     Issue a key. Prints the key ONCE, and its key id. --owner: the application's
                     user or organisation id (counted against ADMIN_MAX_KEYS_PER_OWNER).
                     --minute/--month set partner limits (defaults ${PARTNER_DEFAULT_LIMITS.minute} and ${PARTNER_DEFAULT_LIMITS.month},
                     or PARTNER_LIMIT_MINUTE / PARTNER_LIMIT_MONTH); ${FREE_TIER_FIXED}.
  issue --like <key id> [--label L] [--expires WHEN]
                     A new key with the tier, limits, owner and label of that one (a revoked key
                     replaced: docs/operating.md, the leaked-key runbook).
`,
  options: ['tier', 'owner', 'label', 'minute', 'month', 'expires', 'like'],
  args: [],
  check: (given) => {
    const like = likeOption(given.options);
    const body = like === undefined ? issueBody(given) : undefined;
    return async ({ admin, ctx, now, io }) => {
      let sent = body;
      if (like !== undefined) {
        const found = await actions.get(ctx, like);
        if (!found.ok) return refused(found.error, io);
        sent = likeBody(found.record, given);
      }
      const input = checked(parseIssue(sent, now, admin.settings.partnerDefaults, { ownerRequired: false }));
      const outcome = await actions.issue(ctx, input);
      if (!outcome.ok) return refused(outcome.error, io);
      const key = outcome.key!;
      const shown = shownKey(outcome.record, now);
      io.print({ key, ...shown }, fieldLines([['key', key], ...keyFields(shown)]));
      io.err(
        'Store the key now: it is shown once and cannot be recovered (only its SHA-256 hash is stored).',
      );
      if (!sent?.owner) io.err('It has no owner: give it one with npm run keys -- owner <key id> <owner>.');
      return 0;
    };
  },
};

/** One page of keys with their last use. */
interface KeyPage {
  records: KeyRecord[];
  lastUsed: Map<string, string>;
}

/**
 * Every key (of `owner`, or all), page by page, each page within its own deadline; or an action's refusal's
 * exit code, once said.
 */
async function everyKey(session: Session, owner: string | undefined): Promise<KeyPage[] | number> {
  const pages: KeyPage[] = [];
  let cursor: { created: string; keyId: string } | undefined;
  let start: Item | undefined;
  do {
    const ctx = session.page();
    if (owner) {
      const page = await actions.list(ctx, { owner, limit: 100, ...(cursor && { cursor }) });
      if (!page.ok) return refused(page.error, session.io);
      pages.push(page);
      cursor = page.next && { created: page.next.created, keyId: page.next.keyId };
    } else {
      const page = await ctx.tables.scanKeys(start);
      const ids = page.records.map((record) => record.keyId);
      pages.push({
        records: page.records,
        lastUsed: (await lastUsed(ctx.tables, ids, session.now)).lastUsed,
      });
      start = page.next;
    }
  } while (cursor || start);
  return pages;
}

const listCommand: KeysCommand = {
  help: `  list [--owner ID]  List keys (an owner's, or all): key id, owner, tier, status, limits,
                     created, expiry, last use, label. Never keys.
`,
  options: ['owner'],
  args: [],
  check: ({ options }) => {
    const owner = ownerOption('--owner', options.owner);
    return async (session) => {
      const pages = await everyKey(session, owner);
      if (typeof pages === 'number') return pages;
      const { now, io } = session;
      const used = new Map(pages.flatMap((page) => [...page.lastUsed]));
      const keys = sortKeys(pages.flatMap((page) => page.records)).map((record) =>
        shownKey(record, now, used.get(record.keyId) ?? null),
      );
      io.print(
        keys,
        keys.length
          ? `${keyTable(keys)}\n(last_used: the last counted request since ${lastUseSince(now)})`
          : 'no keys',
      );
      return 0;
    };
  },
};

/** What `revoke` says: refused at once (the stop), until when the stop holds, and the key cache's bound. */
function revokedLines(outcome: actions.Revoked, ttlMs: number, now: Date): { json: object; text: string } {
  const { record, already, effectiveBy, stoppedUntil } = outcome;
  const stop = `its counters are stopped until ${isoSeconds(stoppedUntil)}, and every key cache drops it ${within(ttlMs, now)} (KEY_CACHE_TTL_MS)`;
  return {
    json: {
      key_id: record.keyId,
      status: 'revoked',
      already_revoked: already,
      refused_by: isoSeconds(effectiveBy),
      stopped_until: isoSeconds(stoppedUntil),
      cache_refuses_by: isoSeconds(outcome.cacheBy),
    },
    text: already
      ? `${record.keyId} was already revoked (${stop})`
      : `${record.keyId} revoked: refused (401 invalid_key) by every proxy container at once, from ${isoSeconds(effectiveBy)}: ${stop}`,
  };
}

const revokeCommand: KeysCommand = {
  help: `  revoke <key id> | --key-stdin
                     Revoke a key, by its id or by the key itself read from standard input
                     (never from the command line). Every proxy container refuses it at once:
                     its counters are stopped until every key cache has dropped it
                     (KEY_CACHE_TTL_MS, default ${KEY_CACHE_DEFAULTS.ttlMs / 1000} s).
`,
  options: ['key-stdin'],
  args: ['key id'],
  check:
    ({ options, args: [keyId = ''] }) =>
    async ({ admin, ctx, now, io }) => {
      const outcome = options['key-stdin']
        ? await revokeByKey(ctx, await io.key())
        : await actions.revoke(ctx, keyId);
      if (!outcome.ok) return refused(outcome.error, io);
      const { json, text } = revokedLines(outcome, admin.settings.keyCacheTtlMs, now);
      io.print(json, text);
      return 0;
    },
};

const idCommand: KeysCommand = {
  help: `  id --key-stdin     The key id (and record) of the key read from standard input: a leaked key
                     reported to you, found without it passing through argv, a URL or a log.
`,
  options: ['key-stdin'],
  args: [],
  check: ({ options }) => {
    if (!options['key-stdin']) {
      throw new UsageError('id reads the key from standard input: npm run keys -- id --key-stdin');
    }
    return async ({ ctx, now, io }) => {
      const found = await findByKey(ctx, await io.key());
      if (!found.ok) return refused(found.error, io);
      const shown = shownKey(found.record, now);
      io.print(shown, fieldLines(keyFields(shown)));
      return 0;
    };
  },
};

const importCommand: KeysCommand = {
  help: `  import FILE [--dry-run]
                     Bring over keys already issued by another system: JSON Lines, one key a line
                     ("key" or "key_sha256", "tier", and optionally "owner", "label", "minute",
                     "month", "expires", "created", "status", "external_id": docs/keys.md).
                     Every line is checked first: one refused line and nothing is written. Run
                     again, it writes nothing twice and never overwrites a key already there.
`,
  options: ['dry-run'],
  args: ['file'],
  check: ({ options, args: [file = ''] }) => {
    try {
      accessSync(file, constants.R_OK);
      if (!statSync(file).isFile()) throw new Error('not a file');
    } catch {
      throw new UsageError(`import: ${file} is not a file that can be read`);
    }
    return async ({ page, now, io }) => {
      const report = await importFile({
        file,
        dryRun: options['dry-run'] === true,
        ctx: page,
        now,
        progress: (text) => io.err(text),
      });
      io.print(report, reportText(report));
      return report.refused_count > 0 ? 2 : 0;
    };
  },
};

const enableCommand: KeysCommand = {
  help: `  enable <key id>    Make a revoked key active again (same key id, limits and counters).
`,
  options: [],
  args: ['key id'],
  check:
    ({ args: [keyId = ''] }) =>
    async ({ admin, ctx, now, io }) => {
      const outcome = await actions.enable(ctx, keyId);
      if (!outcome.ok) return refused(outcome.error, io);
      const { expired } = outcome;
      io.print(
        {
          key_id: keyId,
          status: 'active',
          already_active: outcome.already,
          expired,
          accepted_by: expired ? null : isoSeconds(outcome.effectiveBy),
        },
        expired
          ? `${keyId} ${outcome.already ? 'was already active' : 'enabled'}, but its expiry ` +
              `${outcome.record.expires} has passed: still refused (401 invalid_key)`
          : outcome.already
            ? `${keyId} was already active`
            : `${keyId} enabled: accepted by every proxy container ${within(admin.settings.negativeTtlMs, now)} (KEY_NEGATIVE_CACHE_TTL_MS)`,
      );
      if (expired) io.err(`to accept it: npm run keys -- expire ${keyId} --never (or --at a later time)`);
      return 0;
    },
};

const limitsCommand: KeysCommand = {
  help: `  limits <key id> [--minute N] [--month N]
                     Change a partner key's limits (${FREE_TIER_FIXED}).
`,
  options: ['minute', 'month'],
  args: ['key id'],
  check: ({ options, args: [keyId = ''] }) => {
    const limits: Partial<Limits> = limitOptions(options);
    if (limits.minute === undefined && limits.month === undefined)
      throw new UsageError('limits needs --minute, --month or both');
    return async ({ admin, ctx, now, io }) => {
      const outcome = await actions.setLimits(ctx, keyId, limits);
      if (!outcome.ok && outcome.error.code === 'invalid_request') {
        io.err(
          `${keyId} is a free-tier key: ${FREE_TIER_FIXED}; ` +
            'issue a partner key (issue --tier partner --minute N --month N) and revoke this one',
        );
        return 2;
      }
      if (!outcome.ok) return refused(outcome.error, io);
      io.print(
        {
          ...shownKey(outcome.record, now),
          previous_limits: outcome.previous,
          applied_by: isoSeconds(outcome.effectiveBy),
        },
        `${keyId} limits: ${limitsText(outcome.record.limits)} (were ${limitsText(outcome.previous)}); ` +
          `used by every proxy container ${within(admin.settings.keyCacheTtlMs, now)} (KEY_CACHE_TTL_MS)`,
      );
      return 0;
    };
  },
};

const expireCommand: KeysCommand = {
  help: `  expire <key id> --at WHEN | --never
                     From WHEN on the key is refused like a revoked one (401 invalid_key);
                     --never removes the expiry.
`,
  options: ['at', 'never'],
  args: ['key id'],
  check: ({ options, args: [keyId = ''], now: asked }) => {
    if ((options.at === undefined) === (options.never !== true))
      throw new UsageError('expire needs exactly one of --at WHEN and --never');
    const expires = options.never ? null : parseWhen('--at', options.at!, asked);
    return async ({ ctx, io }) => {
      const outcome = await actions.setExpiry(ctx, keyId, { expires });
      if (!outcome.ok) return refused(outcome.error, io);
      if (expires === null) {
        io.print(
          { key_id: keyId, expires: null, status: outcome.record.status },
          `${keyId} never expires` +
            (outcome.record.status === 'active'
              ? ` (if it was refused for its expiry: accepted again by every proxy container by ${isoSeconds(outcome.effectiveBy)})`
              : ' (it is revoked: enable it to accept it again)'),
        );
        return 0;
      }
      io.print(
        { key_id: keyId, expires: outcome.record.expires, refused_by: isoSeconds(outcome.effectiveBy) },
        `${keyId} expires at ${outcome.record.expires}: refused (401 invalid_key) by every proxy container from ${isoSeconds(outcome.effectiveBy)} on`,
      );
      return 0;
    };
  },
};

const rollCommand: KeysCommand = {
  help: `  roll <key id> [--old-expires WHEN]
                     A new key for the same owner, tier, limits and label; the old key expires
                     at WHEN (default ${ROLL_GRACE_DEFAULT_HOURS}h, at most ${BOUNDS.rollGraceDays}d). Prints the new key ONCE.
`,
  options: ['old-expires'],
  args: ['key id'],
  check: ({ options, args: [keyId = ''], now: asked }) => {
    const at = options['old-expires'];
    const when = at === undefined ? undefined : parseWhen('--old-expires', at, asked).toISOString();
    const input = checked(parseRoll(when === undefined ? {} : { old_key_expires: when }, asked), {
      old_key_expires: '--old-expires',
    });
    return async ({ ctx, now, io }) => {
      const outcome = await actions.roll(ctx, keyId, { oldKeyExpires: input.oldKeyExpires });
      if (!outcome.ok) return refused(outcome.error, io);
      const key = outcome.key!;
      const shown = shownKey(outcome.record, now);
      io.print(
        { key, ...shown, old_key: shownKey(outcome.old, now) },
        fieldLines([
          ['key', key],
          ...keyFields(shown),
          ['old key', `${outcome.old.keyId} expires at ${outcome.old.expires}`],
        ]),
      );
      io.err('Store the new key now: it is shown once. Both keys work until the old one expires.');
      return 0;
    };
  },
};

/** Days with requests as "dd: count, …", or 'none'. */
function dayText(days: { date: string; count: number }[]): string {
  return (
    days
      .filter((day) => day.count > 0)
      .map((day) => `${day.date.slice(8)}: ${day.count}`)
      .join(', ') || 'none'
  );
}

const usageCommand: KeysCommand = {
  help: `  usage <key id>     Requests counted this minute and month (UTC), per day of this and last
                     month, and the last use.
`,
  options: [],
  args: ['key id'],
  check:
    ({ args: [keyId = ''] }) =>
    async ({ ctx, now, io }) => {
      const outcome = await actions.usage(ctx, keyId);
      if (!outcome.ok) return refused(outcome.error, io);
      const { record, minute, minuteCount, lastUsed: used, current, previous } = outcome.usage;
      const shown = shownKey(record, now, used);
      const minuteIso = isoSeconds(minute * 1000);
      io.print(
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
    },
};

const ownerCommand: KeysCommand = {
  help: `  owner <key id> <owner>
                     Give a key issued before owners existed its owner.
`,
  options: [],
  args: ['key id', 'owner'],
  check: ({ args: [keyId = '', given] }) => {
    const owner = ownerOption('owner', given)!;
    return async ({ ctx, now, io }) => {
      const outcome = await actions.assignOwner(ctx, keyId, owner);
      if (!outcome.ok) return refused(outcome.error, io);
      io.print(
        shownKey(outcome.record, now),
        outcome.already ? `${keyId} already belongs to ${owner}` : `${keyId} now belongs to ${owner}`,
      );
      return 0;
    };
  },
};

const createTablesCommand: KeysCommand = {
  help: `  create-tables      Create the keys and counters tables if missing (local servers).
`,
  options: [],
  args: [],
  check:
    () =>
    async ({ admin, io }) => {
      // Setting tables up is the SDK's job (admin/tables.ts), as for npm start; keys are the lean client's.
      const client = dynamoClient({ endpoint: admin.endpoint, region: admin.region });
      const result = await createTables(client, admin.tables).finally(() => client.destroy());
      io.print(
        result,
        `tables ready (created: ${result.created.join(', ') || 'none'}; owner index ${result.ownerIndex}; TTL ${result.ttl})`,
      );
      return 0;
    },
};

/** Every command, in the order of the help. */
const COMMANDS: Record<string, KeysCommand> = {
  issue: issueCommand,
  list: listCommand,
  revoke: revokeCommand,
  id: idCommand,
  enable: enableCommand,
  limits: limitsCommand,
  expire: expireCommand,
  roll: rollCommand,
  usage: usageCommand,
  owner: ownerCommand,
  import: importCommand,
  'create-tables': createTablesCommand,
};
const EVERY_COMMAND: readonly OptionName[] = ['json', 'help', 'version'];

const HELP = `${HELP_HEAD}${Object.values(COMMANDS)
  .map((command) => command.help)
  .join('')}${HELP_TAIL}`;

/** The options a mistyped one is compared with: the command's and every command's, or any when there is none. */
function optionCandidates(command: string | undefined): readonly string[] {
  const own = command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  return own ? [...own.options, ...EVERY_COMMAND] : Object.keys(OPTIONS);
}

/** `command`'s entry, with the options given and its positional arguments checked against it. */
function commandFor(command: string, options: Options, args: readonly string[]): KeysCommand {
  const spec = findCommand(COMMANDS, command, 'unknown command: ');
  checkOptionsApply(options, { takes: spec.options, everyCommand: EVERY_COMMAND }, (name) => {
    const takes = spec.options.length ? ` (${command} takes ${optionList(spec.options)})` : '';
    return `${command} takes no --${name}${takes}`;
  });
  // A key where its id goes would be sent to DynamoDB and echoed in "no key with id …": refused unsaid.
  if (args.some((arg, i) => spec.args[i] !== 'file' && holdsKey(arg))) {
    throw new UsageError(
      `the command line ${KEY_PROBLEM}; give its key id (key_…), or the key on standard input with --key-stdin`,
    );
  }
  // --key-stdin takes the place of the key id.
  const wanted = options['key-stdin'] ? [] : spec.args;
  if (options['key-stdin'] && args.length > 0) {
    throw new UsageError(`${command} --key-stdin reads the key from standard input: give no key id with it`);
  }
  if (args.length !== wanted.length) {
    throw new UsageError(
      spec.args.length === 0
        ? `${command} takes no positional arguments`
        : spec.args.length === 1
          ? `${command} takes exactly one ${spec.args[0]}`
          : `${command} takes ${spec.args.join(' and ')}`,
    );
  }
  return spec;
}

/** `--version`: the package's version and the Node.js running it. */
function version(): string {
  const { version: ours } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return `catalogue-read-api ${ours} (keys CLI), Node.js ${process.version}`;
}

async function run(argv: string[], env: Env, io: Io, now: Date): Promise<number> {
  const { command, values, positionals } = parseCommandLine(argv, OPTIONS, optionCandidates);
  const options = values as Options;
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
  const args = positionals.slice(1);
  const execute = commandFor(command, options, args).check({ options, args, env, now });
  const target = await keysTarget(env, ROOT);
  if (target.note) io.err(target.note);
  const admin = adminFrom(target.env);
  const print = (json: unknown, text: string) => io.out(options.json ? JSON.stringify(json, null, 2) : text);
  const page = (): actions.AdminContext => ({
    tables: admin.tables.within(AbortSignal.timeout(admin.settings.deadlineMs)),
    settings: admin.settings,
    now: () => now,
  });
  try {
    const key = () =>
      io.input
        ? readKey(io.input, (text) => io.err(text))
        : Promise.reject(new UsageError('no standard input to read the key from'));
    return await execute({ admin, ctx: page(), page, now, io: { print, err: io.err, key } });
  } catch (error) {
    throw located(error, admin);
  } finally {
    await admin.dynamo.close();
  }
}

/** Exit code for an error: 2 for what the operator typed or configured, 1 for faults. */
function report(error: unknown, err: (text: string) => void): number {
  if (isUsageError(error) || error instanceof ConfigurationError) {
    err(`error: ${errorMessage(error)}\n(run with --help for usage)`);
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
  /** Standard input (--key-stdin); none: no key can be read. */
  input?: KeyInput;
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
    input: process.stdin,
  });
}
