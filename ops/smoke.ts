/**
 * `npm run smoke`: a deployment checked from outside in seconds, after `cdk deploy` or a publish, by hand or
 * in CI (docs/operating.md, "Go-live checklist"); the scheduled check and the deploy hook run the same checks
 * (ops/lambda.ts). Exit codes: 0 every check passed, 1 a check failed or was skipped (what it needs was not
 * given; `--allow-skipped` accepts that), each named, 2 a usage error. The key is read from `CATALOGUE_KEY`
 * only: `--key` is refused, since npm prints the whole command line and shells keep it in their history.
 */
import { pathToFileURL } from 'node:url';
import { checkOptionsApply, isUsageError, parseCommandLine, UsageError } from '../cli/kit.js';
import { errorMessage } from '../store/errors.js';
import { adminCheck } from './admin-check.js';
import { apiChecks } from './api-checks.js';
import { type CheckResult, deadlineFetch } from './checks.js';
import { liveVersionCheck } from './live-version.js';
import { type SmokeTarget, smokeTarget } from './target.js';

const HELP = `Usage: CATALOGUE_KEY=pk_live_… npm run smoke -- [--url URL | --stack NAME] [options]

Checks a deployment of the Catalogue Read API from outside, in under 30 s: the edge's 401 and 405, a 200 with
its ETag and its 304, the rate-limit headers, /docs, the admin API, the live catalogue version and its age.
Prints what passed; exits 1 naming what failed or was skipped.

The key to read with (two requests of its quota) is CATALOGUE_KEY, never an option: npm prints the command
line. With --stack and no CATALOGUE_KEY, the stack's own check key is read from its secret (CheckKeySecretArn).

  --url URL          the API's base URL (https://<domain>/v1); default CATALOGUE_URL
  --stack NAME       read the URLs, the catalogue location and the check key from this stack (read access only)
  --region REGION    the stack's region (default AWS_REGION, else us-east-1)
  --admin            with --stack: sign the admin check with your credentials (needs AdminCallerPolicyArn);
                     without it the admin API must refuse an unsigned request (403)
  --admin-url URL    the admin API (default: the stack's AdminApiUrl, else CATALOGUE_ADMIN_URL); signed with
                     your AWS credentials (for npm start's, CATALOGUE_ADMIN_ACCESS_KEY_ID and _SECRET_ACCESS_KEY)
  --catalogue URI    where the live version is read (s3://bucket/prefix; default: the stack's CatalogueUri)
  --endpoint URL     an S3-compatible endpoint for --catalogue (default CATALOGUE_S3_ENDPOINT)
  --allow-skipped    exit 0 when checks were skipped for what was not given (they are still listed)
  --timeout SECONDS  the whole run's deadline (default 25)
  --json             one JSON document (for CI) instead of the table
  --help             this text`;

/** Why `--key` is refused, in one line. */
export const KEY_OPTION_REFUSED =
  '--key is not taken: npm prints the whole command line and shells keep it in their history, key included; put the key in CATALOGUE_KEY instead (CATALOGUE_KEY=pk_live_… npm run smoke -- …)';

const OPTIONS = {
  url: { type: 'string' },
  // Parsed only to be refused with its reason (KEY_OPTION_REFUSED), not as an unknown option.
  key: { type: 'string' },
  stack: { type: 'string' },
  region: { type: 'string' },
  admin: { type: 'boolean' },
  'allow-skipped': { type: 'boolean' },
  'admin-url': { type: 'string' },
  catalogue: { type: 'string' },
  endpoint: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;
const NAMES = Object.keys(OPTIONS).filter((name) => name !== 'key');
const DEFAULT_TIMEOUT_SECONDS = 25;

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** The run's outcome as `--json` prints it. */
export interface SmokeReport {
  ok: boolean;
  api: string;
  failed: string[];
  /** Checks not run for what was not given (a failure unless `--allow-skipped`). */
  skipped: string[];
  checks: CheckResult[];
}

/**
 * The run's outcome: the failed and the skipped checks by name; ok when none failed and none was skipped
 * (or skipping is allowed).
 * @example outcome(checks, { allowSkipped: false }).ok
 */
export function outcome(
  checks: readonly CheckResult[],
  { allowSkipped }: { allowSkipped: boolean },
): { ok: boolean; failed: string[]; skipped: string[] } {
  const failed = checks.filter((c) => c.verdict === 'fail').map((c) => c.name);
  const skipped = checks.filter((c) => c.verdict === 'skip').map((c) => c.name);
  return { ok: failed.length === 0 && (allowSkipped || skipped.length === 0), failed, skipped };
}

/**
 * Every check against `target` within `deadline` (epoch ms), in the order of CHECK_NAMES.
 * @example const checks = await runChecks(target, Date.now() + 25_000, () => new Date());
 */
export async function runChecks(
  target: SmokeTarget,
  deadline: number,
  now: () => Date,
): Promise<CheckResult[]> {
  const [api, admin, live] = await Promise.all([
    apiChecks(deadlineFetch(deadline), target.api, now),
    adminCheck(target.admin, deadline),
    liveVersionCheck(target.catalogue, deadline, now),
  ]);
  return [...api, admin, live];
}

/** The table a person reads: one line per check, its verdict, its time and what was seen. */
export function resultTable(checks: readonly CheckResult[]): string {
  const rows = checks.map((c) => [
    c.name,
    c.verdict === 'pass' ? 'ok' : c.verdict.toUpperCase(),
    `${c.ms} ms`,
    c.detail,
  ]);
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) => row.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell)).join('  '))
    .join('\n');
}

/** What the run ends with: the failed checks named, the skipped ones, or that all passed. */
export function verdictLine(checks: readonly CheckResult[], allowSkipped = false): string {
  const { failed, skipped } = outcome(checks, { allowSkipped });
  if (failed.length > 0) return `smoke check failed: ${failed.join(', ')}`;
  if (skipped.length > 0 && !allowSkipped) {
    return `smoke check incomplete: not checked: ${skipped.join(', ')} (give what they need, or --allow-skipped)`;
  }
  return `smoke check passed${skipped.length > 0 ? ` (not checked: ${skipped.join(', ')})` : ''}`;
}

async function run(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  io: Io,
): Promise<number> {
  const { values, positionals } = parseCommandLine(argv, OPTIONS, () => NAMES);
  if (values.key !== undefined) throw new UsageError(KEY_OPTION_REFUSED);
  checkOptionsApply(values, { takes: NAMES, everyCommand: [] }, (name) => `--${name} does not apply`);
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const seconds = Number(values.timeout ?? DEFAULT_TIMEOUT_SECONDS);
  if (!(seconds > 0 && seconds <= 300)) throw new UsageError(`--timeout ${values.timeout}: 1 to 300 seconds`);
  const target = await smokeTarget(values, env);
  const checks = await runChecks(target, Date.now() + seconds * 1000, () => new Date());
  const allowSkipped = values['allow-skipped'] === true;
  const { ok, failed, skipped } = outcome(checks, { allowSkipped });
  if (values.json) {
    const report: SmokeReport = { ok, api: target.api.api, failed, skipped, checks };
    io.out(JSON.stringify(report, null, 2));
  } else {
    io.out(`Smoke check of ${target.api.api}\n\n${resultTable(checks)}\n`);
    (ok ? io.out : io.err)(verdictLine(checks, allowSkipped));
  }
  return ok ? 0 : 1;
}

/**
 * Run the smoke check; resolves to the exit code (never throws).
 * @example process.exitCode = await main(['--url', url], { ...process.env, CATALOGUE_KEY: key }, io);
 */
export function main(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  io: Io,
): Promise<number> {
  return run(argv, env, io).catch((error: unknown) => {
    if (isUsageError(error)) {
      io.err(`error: ${errorMessage(error)}\n(run with --help for usage)`);
      return 2;
    }
    io.err(`error: ${errorMessage(error)}`);
    return 1;
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2), process.env, {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  });
}
