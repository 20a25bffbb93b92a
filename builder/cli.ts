/**
 * `npm run catalogue -- <command>`: build/publish, validate and generate catalogue snapshots.
 * Exit codes (EXIT): 0 ok, 1 validation failed, 2 usage, 3 publish failed, 4 another publish holds the
 * target; a new outcome gets a new code.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { closestMatch } from 'leven';
import { PublishBusyError } from './publish/lock.js';
import { DEFAULT_RETENTION_MS } from './publish/types.js';
import { publishSnapshot } from './publish-snapshot.js';
import { explainPublishFailure } from './report/failure.js';
import { explainLines, summaryLine, terminalProgress } from './report/progress.js';
import { loadSnapshot } from './snapshot/load.js';
import { formatProblem, type Problem } from './snapshot/problems.js';
import { generateSnapshot, writeSnapshot } from './synthetic/generate.js';
import { openTarget } from './target.js';

export const EXIT = { ok: 0, invalid: 1, usage: 2, publishFailed: 3, busy: 4 } as const;

export const HELP = `Catalogue builder: compile a catalogue snapshot into the precomputed objects the API serves.

Usage:
  npm run catalogue -- build --source DIR --out DIR|s3://BUCKET[/PREFIX] [options]
  npm run catalogue -- repair --source DIR --out DIR|s3://BUCKET[/PREFIX] [options]
  npm run catalogue -- validate --source DIR
  npm run catalogue -- generate --modules N --seed S --out DIR
  npm run catalogue -- --help

Commands:
  build      Validate the snapshot in --source, render every list variant and detail, and publish:
             upload objects that are not there yet, then the version file and log, then the pointer
             (current.json) last, then delete what no retained version references.
             A small edit is built from the current version's manifest: only the list variants and
             details it changes are rendered and uploaded, and the target is not listed.
  repair     Like build, but list the whole target first: upload every object of this version that is
             missing (a damaged target), and delete every object no retained version references
             (orphans of abandoned publishes, objects of versions published by an older format).
  validate   Check a snapshot and list every problem (file, record id, field, reason). Writes nothing.
  generate   Write a deterministic synthetic snapshot of N modules (for load tests and benchmarks).

Options of build:
  --source DIR         snapshot directory: standards.json, tags.json, manufacturers.json, modules.json
  --out TARGET         a local directory, or s3://bucket/prefix (objects go to <prefix>/o/, the pointer to
                       <prefix>/current.json)
  --endpoint URL       S3-compatible endpoint; AWS when absent. npm start prints its own local one
                       (export CATALOGUE_S3_ENDPOINT=…). Credentials and region come from the usual AWS
                       environment and profiles.
  --dry-run            report what would be added and removed (objects and bytes); write nothing
  --verbose, -v        also list every index key (list variant or detail) whose object changes, and
                       every object uploaded (or, with --dry-run, that would be)
  --retention DUR      how long a superseded version stays readable before collection: 0 or a number with
                       a unit ms, s, m, h or d (default 24h). Open cursors pin a version for this long.
  --concurrency N      uploads in flight (default 16 for a directory, 48 for S3)

Options of generate:
  --modules N          number of modules (nonnegative integer)
  --seed S             any integer; the same seed gives the same snapshot
  --out DIR            directory to write the four snapshot files to

Examples (docs/publishing.md walks through them):
  cp -r fixtures/catalogue my-catalogue          # then edit my-catalogue/*.json
  npm run catalogue -- validate --source my-catalogue
  npm run catalogue -- build --source my-catalogue --out s3://catalogue --endpoint "$CATALOGUE_S3_ENDPOINT" --dry-run
  npm run catalogue -- build --source my-catalogue --out s3://my-bucket/catalogue

Output:
  A progress bar on stderr when it is a terminal; then one summary line on stdout: version, objects
  added/unchanged/removed, bytes added/removed, version files removed, seconds.

Exit codes:
  0  done (for validate: the snapshot is valid)
  1  the snapshot is invalid; every problem is printed on stderr and nothing is written
  2  usage error (unknown command or option, missing or malformed value)
  3  publishing failed (storage unreachable, access denied…); the previous version stays current.
     The message says what to do: run the same build again for a passing fault (network, timeout,
     throttling), or what to fix first (credentials, permissions, bucket, endpoint, server, disk)
  4  another publish holds the target (one publisher at a time); nothing was written. Run it again
     once the other has finished; a publish whose process is gone is taken over at once on the same
     machine, else once its lease has run out (about 90 s after it stopped)
`;

class UsageError extends Error {
  override name = 'UsageError';
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parse a retention such as `24h`, `90m`, `2d` or `0`.
 * @example parseRetention('24h') // → 86400000
 */
export function parseRetention(value: string): number {
  if (value === '0') return 0;
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(value);
  if (!match)
    throw new UsageError(`--retention ${value}: expected 0 or a number with a unit ms, s, m, h or d`);
  return Number(match[1]) * UNITS[match[2]!]!;
}

function parseInteger(name: string, value: string | undefined, min: number): number {
  if (value === undefined) throw new UsageError(`--${name} is required`);
  const number = /^-?\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min) {
    throw new UsageError(`--${name} ${value}: expected an integer ≥ ${min}`);
  }
  return number;
}

function required(name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function printProblems(problems: readonly Problem[]): void {
  for (const problem of problems) process.stderr.write(`${formatProblem(problem)}\n`);
  const count = `${problems.length} problem${problems.length === 1 ? '' : 's'}`;
  process.stderr.write(`snapshot refused: ${count}; nothing was written\n`);
}

const OPTIONS = {
  source: { type: 'string' },
  out: { type: 'string' },
  endpoint: { type: 'string' },
  'dry-run': { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  retention: { type: 'string' },
  concurrency: { type: 'string' },
  modules: { type: 'string' },
  seed: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * "; did you mean X?" when one of `candidates` is close enough to a mistyped `input` to be what was meant (two
 * edits, a swap of neighbours included, or a third of its letters for long words; one for words of up to
 * three letters), else ''. Edit distance from `leven`.
 * @example didYouMean('biuld', ['build', 'repair']) // → '; did you mean build?'
 */
function didYouMean(input: string, candidates: readonly string[], format = (match: string) => match): string {
  const maxDistance = input.length <= 3 ? 1 : Math.max(2, Math.floor(input.length / 3));
  const match = closestMatch(input, candidates, { maxDistance });
  return match === undefined ? '' : `; did you mean ${format(match)}?`;
}

/**
 * Unknown options answered with the closest option of the command (of any command when there is none yet):
 * Node's own message ("Unknown option '--sourc'") offers no suggestion.
 */
function checkOptionNames(argv: readonly string[]): void {
  const { tokens } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const command = tokens.find((token) => token.kind === 'positional')?.value;
  const names = [...(command && ALLOWED[command] ? ALLOWED[command] : Object.keys(OPTIONS)), 'help'];
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name in OPTIONS) continue;
    throw new UsageError(
      `unknown option '${token.rawName}'${didYouMean(token.name, names, (name) => `'--${name}'`)}`,
    );
  }
}

const ALLOWED: Record<string, readonly string[]> = {
  build: ['source', 'out', 'endpoint', 'dry-run', 'verbose', 'retention', 'concurrency'],
  repair: ['source', 'out', 'endpoint', 'dry-run', 'verbose', 'retention', 'concurrency'],
  validate: ['source'],
  generate: ['modules', 'seed', 'out'],
};

/** What the program that runs the CLI gives it. */
export interface CommandOptions {
  /**
   * The fingerprint of the builder's code, dependencies and Node.js (builder/launch.mjs gives it): modules
   * unchanged since the current version published by the same builder are neither validated nor serialised
   * again (builder/publish/reuse.ts). Without it every module is, as on a first publish.
   */
  builder?: string;
}

async function build(
  values: Record<string, string | boolean | undefined>,
  repair: boolean,
  options: CommandOptions,
): Promise<number> {
  const source = required('source', values.source as string | undefined);
  const out = required('out', values.out as string | undefined);
  const retentionMs =
    values.retention === undefined ? DEFAULT_RETENTION_MS : parseRetention(values.retention as string);
  const concurrency =
    values.concurrency === undefined
      ? undefined
      : parseInteger('concurrency', values.concurrency as string, 1);
  let target: Awaited<ReturnType<typeof openTarget>>;
  try {
    target = await openTarget(out, values.endpoint as string | undefined);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  try {
    const progress = terminalProgress(process.stderr);
    const outcome = await publishSnapshot(source, target, {
      ...(options.builder !== undefined && { builder: options.builder }),
      retentionMs,
      concurrency: concurrency ?? target.defaultConcurrency,
      dryRun: values['dry-run'] === true,
      repair,
      explain: values.verbose === true,
      ...(progress && { progress }),
      warn: (message) => process.stderr.write(`warning: ${message}\n`),
    });
    if (outcome.ok) {
      const { summary } = outcome;
      if (values.verbose) for (const line of explainLines(summary)) process.stdout.write(`${line}\n`);
      process.stdout.write(`${summaryLine(summary, target.description)}\n`);
      return EXIT.ok;
    }
    if (outcome.reason === 'invalid') {
      printProblems(outcome.problems);
      return EXIT.invalid;
    }
    const error = outcome.error as Error;
    if (error instanceof PublishBusyError) {
      process.stderr.write(
        `publish refused: ${error.message}; target: ${target.location}\n` +
          'nothing was written; run this publish again once the other one has finished\n',
      );
      return EXIT.busy;
    }
    const cause = error.cause as Error | undefined;
    const { advice } = explainPublishFailure(error, {
      description: target.description,
      endpoint: values.endpoint as string | undefined,
    });
    process.stderr.write(
      `publish failed: ${error.message}${cause?.message ? ` (${cause.message})` : ''}; ` +
        `target: ${target.location}\n` +
        `the previous version is still current; ${advice}\n`,
    );
    return EXIT.publishFailed;
  } finally {
    target.close();
  }
}

async function validate(values: Record<string, string | boolean | undefined>): Promise<number> {
  const source = required('source', values.source as string | undefined);
  const loaded = await loadSnapshot(source);
  if (!loaded.ok) {
    printProblems(loaded.problems);
    return EXIT.invalid;
  }
  const { standards, tags, manufacturers, modules } = loaded.snapshot;
  process.stdout.write(
    `${source}: valid (${modules.length} modules, ${manufacturers.length} manufacturers, ` +
      `${standards.length} standards, ${tags.length} tags)\n`,
  );
  return EXIT.ok;
}

async function generate(values: Record<string, string | boolean | undefined>): Promise<number> {
  const modules = parseInteger('modules', values.modules as string | undefined, 0);
  const seed = parseInteger('seed', values.seed as string | undefined, Number.MIN_SAFE_INTEGER);
  const out = required('out', values.out as string | undefined);
  const started = performance.now();
  await writeSnapshot(out, generateSnapshot({ modules, seed }));
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(`wrote a snapshot of ${modules} modules (seed ${seed}) to ${out} in ${seconds} s\n`);
  return EXIT.ok;
}

/**
 * Run the CLI with `argv` (without node and script); resolves to the exit code.
 * @example await main(['validate', '--source', 'fixtures/catalogue']) // → 0
 */
export async function main(argv: readonly string[], options: CommandOptions = {}): Promise<number> {
  try {
    checkOptionNames(argv);
    const { values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true });
    const command = positionals[0];
    if (values.help || command === 'help' || command === undefined) {
      process.stdout.write(HELP);
      return command === undefined && !values.help ? EXIT.usage : EXIT.ok;
    }
    if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`);
    const allowed = ALLOWED[command];
    if (!allowed) {
      const commands = Object.keys(ALLOWED);
      throw new UsageError(
        `unknown command ${command}${didYouMean(command, commands) || ` (commands: ${commands.join(', ')})`}`,
      );
    }
    for (const name of Object.keys(values)) {
      if (!allowed.includes(name) && name !== 'help') {
        throw new UsageError(
          `--${name} does not apply to ${command} (${command} takes ${allowed.map((option) => `--${option}`).join(', ')})`,
        );
      }
    }
    if (command === 'build' || command === 'repair')
      return await build(values, command === 'repair', options);
    if (command === 'validate') return await validate(values);
    return await generate(values);
  } catch (error) {
    const usage =
      error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    if (!usage) throw error;
    process.stderr.write(`${(error as Error).message}\nrun with --help for usage\n`);
    return EXIT.usage;
  }
}

/**
 * Run the CLI as a command: `argv` without node and the script; the exit code goes to `process.exitCode`.
 * builder/launch.mjs (`npm run catalogue`) calls this from its bundle.
 * @example await runCommand(['validate', '--source', 'fixtures/catalogue']);
 */
export async function runCommand(argv: readonly string[], options: CommandOptions = {}): Promise<void> {
  try {
    process.exitCode = await main(argv, options);
  } catch (error) {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = EXIT.publishFailed;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  void runCommand(process.argv.slice(2));
}
