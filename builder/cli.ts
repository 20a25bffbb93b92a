/**
 * `npm run catalogue -- <command>`: build (publish), validate and generate catalogue snapshots; list the
 * versions of a target, roll it back, break its stale lock (target-commands.ts). Exit codes: exit.ts.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  checkOptionsApply,
  findCommand,
  isUsageError,
  optionList,
  parseCommandLine,
  UsageError,
} from '../cli/kit.js';
import packageJson from '../package.json' with { type: 'json' };
import { errorMessage, errorWithCause } from '../store/errors.js';
import { UPLOAD_PREFIXES } from '../store/upload-prefixes.js';
import { EXIT, whoAmI } from './exit.js';
import { type CommandHelp, helpText } from './help.js';
import { chooseTarget, NoTargetError, type TargetChoice } from './local-target.js';
import { impossibility, PublishBusyError } from './publish/lock.js';
import { DEFAULT_RETENTION_MS } from './publish/types.js';
import { readHistory, readLiveVersion } from './publish/versions.js';
import { PointerMovedError } from './publish/write.js';
import { publishSnapshot } from './publish-snapshot.js';
import { explainPublishFailure } from './report/failure.js';
import { explainLines, summaryLine } from './report/progress.js';
import { publishProgress } from './report/terminal.js';
import { loadSnapshot } from './snapshot/load.js';
import { formatProblem, type Problem } from './snapshot/problems.js';
import { sourceDirectoryProblem } from './snapshot/source.js';
import { generateSnapshot, writeSnapshot } from './synthetic/generate.js';
import { openTarget, type PublishTarget } from './target.js';
import { rollbackCommand, unlockCommand, versionsCommand } from './target-commands.js';
import { DEFAULT_WAIT_MS, uploadCommand } from './upload-command.js';
import { failedCommand, retryCommand } from './upload-failures.js';

export { EXIT } from './exit.js';

/** The options given, by name. */
type Values = Record<string, string | boolean | undefined>;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parse the duration of `--<option>`, such as `24h`, `90m`, `2d` or `0`.
 * @example parseDuration('retention', '24h') // → 86400000
 */
export function parseDuration(option: string, value: string): number {
  if (value === '0') return 0;
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(value);
  if (!match)
    throw new UsageError(`--${option} ${value}: expected 0 or a number with a unit ms, s, m, h or d`);
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

/** The problems kept (the first 1,000), one line each, then how many there are in all. */
function printProblems(problems: readonly Problem[], total: number): void {
  for (const problem of problems) process.stderr.write(`${formatProblem(problem)}\n`);
  if (total > problems.length) {
    process.stderr.write(`… and ${total - problems.length} more problems not listed\n`);
  }
  const count = `${total} problem${total === 1 ? '' : 's'}`;
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
  json: { type: 'boolean' },
  to: { type: 'string' },
  force: { type: 'boolean' },
  name: { type: 'string' },
  wait: { type: 'string' },
  after: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/** What the program that runs the CLI gives it. */
export interface CommandOptions {
  /**
   * The fingerprint of the builder's code, dependencies and Node.js (builder/launch.mjs gives it): modules
   * unchanged since the current version published by the same builder are neither validated nor serialised
   * again (builder/publish/reuse.ts). Without it every module is, as on a first publish.
   */
  builder?: string;
  /** The checkout's root, whose `.local/` is `npm start`'s data directory (upload); default: the working directory. */
  root?: string;
}

/**
 * What to say of the live version after a failed publish: the previous one, still; or, when the pointer
 * moved meanwhile (another publish made its version live), that version, by name and publisher.
 */
async function liveAfterFailure(target: PublishTarget, error: Error): Promise<string> {
  const still = 'the previous version is still current';
  if (!(error instanceof PointerMovedError)) return still;
  try {
    const live = await readLiveVersion(target.store, target.prefix);
    if (live === null) return still;
    const entry = (await readHistory(target.store, target.prefix)).versions.find((e) => e.version === live);
    const by = entry?.published ? ` (published by ${entry.published.by}, ${entry.published.via})` : '';
    return `version ${live} is current${by}: another publish made it current while this one ran, and this one's version was not`;
  } catch {
    return still;
  }
}

/** Open `--out` (a usage error when it is malformed). */
async function openOut(values: Values): Promise<PublishTarget> {
  const out = required('out', values.out as string | undefined);
  try {
    return await openTarget(out, values.endpoint as string | undefined);
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
}

/**
 * `--out` (and `--endpoint`), or with no `--out` this checkout's running npm start (builder/local-target.ts), said
 * on stderr; undefined when there is neither, said too.
 */
async function openOutOrLocal(
  values: Values,
  options: CommandOptions,
  command: string,
): Promise<PublishTarget | undefined> {
  let choice: TargetChoice;
  try {
    choice = await chooseTarget(
      values.out as string | undefined,
      values.endpoint as string | undefined,
      { env: process.env, root: options.root ?? process.cwd() },
      command,
    );
  } catch (error) {
    if (!(error instanceof NoTargetError)) throw new UsageError(errorMessage(error));
    process.stderr.write(`${error.message}\n`);
    return undefined;
  }
  if (choice.local) process.stderr.write(`${choice.local}\n`);
  try {
    return await openTarget(choice.out, choice.endpoint);
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
}

/** `--source` names a directory, or a usage error says what it names instead. */
async function checkSource(values: Values): Promise<string> {
  const source = required('source', values.source as string | undefined);
  const problem = await sourceDirectoryProblem(source);
  if (problem !== undefined) throw new UsageError(`--source ${source}: ${problem}`);
  return source;
}

/** What `build` takes from its options, read before anything is opened (a usage error says which is wrong). */
function buildSettings(values: Values): {
  source: string;
  retentionMs: number;
  concurrency: number | undefined;
} {
  const source = required('source', values.source as string | undefined);
  const retentionMs =
    values.retention === undefined
      ? DEFAULT_RETENTION_MS
      : parseDuration('retention', values.retention as string);
  const concurrency =
    values.concurrency === undefined
      ? undefined
      : parseInteger('concurrency', values.concurrency as string, 1);
  return { source, retentionMs, concurrency };
}

async function build(values: Values, repair: boolean, options: CommandOptions): Promise<number> {
  const { source, retentionMs, concurrency } = buildSettings(values);
  const target = await openOut(values);
  try {
    await checkSource(values);
  } catch (error) {
    target.close();
    throw error;
  }
  // A bar on a terminal; elsewhere (a CI log, a pipe) a line every 5 s once a step lasts that long.
  const progress = publishProgress(process.stderr, { quietStart: true });
  try {
    const outcome = await publishSnapshot(source, target, {
      ...(options.builder !== undefined && { builder: options.builder }),
      retentionMs,
      concurrency: concurrency ?? target.defaultConcurrency,
      dryRun: values['dry-run'] === true,
      repair,
      explain: values.verbose === true,
      progress,
      record: { by: whoAmI(), via: 'cli' },
      warn: (message) => process.stderr.write(`warning: ${message}\n`),
    });
    progress.close();
    if (outcome.ok) {
      const { summary } = outcome;
      if (values.verbose) for (const line of explainLines(summary)) process.stdout.write(`${line}\n`);
      process.stdout.write(`${summaryLine(summary, target.description)}\n`);
      return EXIT.ok;
    }
    if (outcome.reason === 'invalid') {
      printProblems(outcome.problems, outcome.problemCount);
      return EXIT.invalid;
    }
    return await publishFailed(outcome.error as Error, target, values);
  } finally {
    progress.close();
    target.close();
  }
}

/**
 * Say why a publish failed and what is live now: refused while another publish holds the target (with how to
 * clear a lock no publish can hold), or failed on the way (with advice). Returns the exit code.
 */
async function publishFailed(error: Error, target: PublishTarget, values: Values): Promise<number> {
  if (error instanceof PublishBusyError) {
    const invalid = impossibility(error.holder, new Date());
    const hint =
      !error.holder || invalid !== undefined
        ? `; that lock cannot be a publish's (${invalid ?? 'no holder could be read'}): if no publish is running, ` +
          `\`npm run catalogue -- unlock --out ${values.out as string}\` clears it`
        : '';
    process.stderr.write(
      `publish refused: ${error.message}; target: ${target.location}\n` +
        `nothing was written; run this publish again once the other one has finished${hint}\n`,
    );
    return EXIT.busy;
  }
  const { advice } = explainPublishFailure(error, {
    description: target.description,
    endpoint: values.endpoint as string | undefined,
  });
  process.stderr.write(
    `publish failed: ${errorWithCause(error)}; ` +
      `target: ${target.location}\n` +
      `${await liveAfterFailure(target, error)}; ${advice}\n`,
  );
  return EXIT.publishFailed;
}

async function validate(values: Values): Promise<number> {
  const source = await checkSource(values);
  const loaded = await loadSnapshot(source);
  if (!loaded.ok) {
    printProblems(loaded.problems, loaded.problemCount);
    return EXIT.invalid;
  }
  const { standards, tags, manufacturers, modules } = loaded.snapshot;
  process.stdout.write(
    `${source}: valid (${modules.length} modules, ${manufacturers.length} manufacturers, ` +
      `${standards.length} standards, ${tags.length} tags)\nsnapshot digest ${loaded.digest}\n`,
  );
  return EXIT.ok;
}

async function generate(values: Values): Promise<number> {
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
 * A command on `--out`'s target (versions, rollback, unlock): the target opened, `act` run on it, and a failure
 * told as a failed publish is (what happened, where, what to do), exit 3.
 */
function onTarget(
  name: string,
  act: (target: PublishTarget, values: Values) => Promise<number>,
): (values: Values, options: CommandOptions) => Promise<number> {
  return async (values, options) => {
    const target = await openOutOrLocal(values, options, name);
    if (target === undefined) return EXIT.publishFailed;
    try {
      return await act(target, values);
    } catch (error) {
      const { advice } = explainPublishFailure(error, {
        description: target.description,
        endpoint: values.endpoint as string | undefined,
        again: `run ${name} again`,
      });
      process.stderr.write(
        `${name} failed: ${errorWithCause(error)}; ` + `target: ${target.location}\n${advice}\n`,
      );
      return EXIT.publishFailed;
    } finally {
      target.close();
    }
  };
}

/**
 * One command of the table below: the options it takes (`--help` and `--version`: every command) and what it does.
 * A new command is one more entry: its help lines, options and action.
 */
interface BuilderCommand extends CommandHelp {
  options: readonly string[];
  /** The command's one argument, when it takes one (upload's FOLDER|FILE.tar.gz); others take none. */
  argument?: string;
  run(values: Values, options: CommandOptions, argument: string | undefined): Promise<number>;
}

/** `upload`: its command line made into the request upload-command.ts runs. */
function upload(values: Values, options: CommandOptions, source: string | undefined): Promise<number> {
  if (source === undefined) {
    throw new UsageError(
      'upload needs the snapshot folder or .tar.gz: npm run catalogue -- upload my-catalogue',
    );
  }
  const wait = waitOption(values);
  return uploadCommand({
    source,
    out: values.out as string | undefined,
    endpoint: values.endpoint as string | undefined,
    name: (values.name as string | undefined)?.replace(/\.tar\.gz$/, ''),
    waitMs: wait,
    json: values.json === true,
    env: process.env,
    root: options.root ?? process.cwd(),
  });
}

/** `--wait` of a command that waits for the builder's report (upload, retry). */
function waitOption(values: Values): number {
  const wait = values.wait === undefined ? DEFAULT_WAIT_MS : parseDuration('wait', values.wait as string);
  if (wait === 0) throw new UsageError('--wait 0: the upload waits for its report; give it at least 1s');
  return wait;
}

/** What `failed` and `retry` take from their command line (and the destination, as upload finds it). */
function failuresRequest(values: Values, options: CommandOptions) {
  return {
    out: values.out as string | undefined,
    endpoint: values.endpoint as string | undefined,
    afterMs: values.after === undefined ? undefined : parseDuration('after', values.after as string),
    json: values.json === true,
    env: process.env,
    root: options.root ?? process.cwd(),
  };
}

/** `retry`: its command line made into the request upload-failures.ts runs. */
function retry(values: Values, options: CommandOptions, name: string | undefined): Promise<number> {
  if (name === undefined) {
    throw new UsageError(
      'retry needs the upload’s name, as failed lists it: npm run catalogue -- retry 20260601T120000.123Z-73bcfbfa6212',
    );
  }
  return retryCommand({
    ...failuresRequest(values, options),
    name,
    force: values.force === true,
    waitMs: waitOption(values),
  });
}

const BUILD_OPTIONS = ['source', 'out', 'endpoint', 'dry-run', 'verbose', 'retention', 'concurrency'];
const COMMANDS: Record<string, BuilderCommand> = {
  build: {
    usage: `  npm run catalogue -- build --source DIR --out DIR|s3://BUCKET[/PREFIX] [options]   (or: publish …)
`,
    summary: `  build      Validate the snapshot in --source, render every list variant and detail, and publish:
  publish    upload objects that are not there yet, then the version file and log, then the pointer
             (current.json) last, then delete what no retained version references. (publish and
             build are the same command.)
             A small edit is built from the current version's manifest: only the list variants and
             details it changes are rendered and uploaded, and the target is not listed.
`,
    options: BUILD_OPTIONS,
    run: (values, options) => build(values, false, options),
  },
  publish: {
    // build's lines name it.
    usage: '',
    summary: '',
    options: BUILD_OPTIONS,
    run: (values, options) => build(values, false, options),
  },
  repair: {
    usage: `  npm run catalogue -- repair --source DIR --out DIR|s3://BUCKET[/PREFIX] [options]
`,
    summary: `  repair     Like build, but list the whole target first: upload every object of this version that is
             missing (a damaged target), and delete every object no retained version references
             (orphans of abandoned publishes, objects of versions published by an older format).
`,
    options: BUILD_OPTIONS,
    run: (values, options) => build(values, true, options),
  },
  validate: {
    usage: `  npm run catalogue -- validate --source DIR
`,
    summary: `  validate   Check a snapshot and list every problem (file, record id, field, reason). Writes nothing.
             Prints the snapshot's digest, which each version records.
`,
    options: ['source'],
    run: validate,
  },
  upload: {
    usage: `  npm run catalogue -- upload FOLDER|FILE.tar.gz [--out s3://BUCKET] [--wait DUR] [--json]
`,
    summary: `  upload     Publish by upload: pack the snapshot folder (or take a .tar.gz), check it as the builder
             will (every problem; nothing is uploaded when it is invalid), upload it to the stack's
             ${UPLOAD_PREFIXES.incomingPrefix} (--out s3://BUCKET, with the AWS credentials of the environment: the stack's
             upload policy suffices) or, with no --out, to this checkout's npm start; then wait for the
             builder's report and say the outcome, the version, what changed and how long it took.
`,
    options: ['out', 'endpoint', 'name', 'wait', 'json'],
    argument: 'FOLDER|FILE.tar.gz',
    run: upload,
  },
  failed: {
    usage: `  npm run catalogue -- failed [--out s3://BUCKET] [--after DUR] [--json]
`,
    summary: `  failed     List the uploads in ${UPLOAD_PREFIXES.incomingPrefix} that failed (the cause from the builder's report) or got no
             report within --after (the builder never finished an attempt), newest first, each with the
             retry line that runs it again. Exit 0 when there are none, 8 when there are.
`,
    options: ['out', 'endpoint', 'after', 'json'],
    run: (values, options) => failedCommand(failuresRequest(values, options)),
  },
  retry: {
    usage: `  npm run catalogue -- retry NAME [--out s3://BUCKET] [--force] [--wait DUR] [--json]
`,
    summary: `  retry      Run a failed upload again: upload its bytes again under its name (the builder handles it as
             any upload, and its report replaces the failed one), wait for the report and say the outcome
             as upload does. Refused (exit 5, nothing written) when the upload has its final word, or is
             gone; and, unless --force, while it may still be building or a newer upload came after it
             (retried, it would be the newest and publish its older catalogue over that one).
`,
    options: ['out', 'endpoint', 'after', 'force', 'wait', 'json'],
    argument: 'NAME',
    run: retry,
  },
  versions: {
    usage: `  npm run catalogue -- versions [--out TARGET] [--json]
`,
    summary: `  versions   List the target's retained versions, newest first: id, when it was live, who published it
             (and how: cli, upload, npm start), from which snapshot digest, its counts; * marks the live
             one. --json prints the listing as JSON.
`,
    options: ['out', 'endpoint', 'json'],
    run: onTarget('versions', (target, values) => versionsCommand(target, values.json === true)),
  },
  rollback: {
    usage: `  npm run catalogue -- rollback [--out TARGET] [--to VERSION]
`,
    summary: `  rollback   Make the previous retained version live again (or --to VERSION, one that versions lists):
             holding the publish lock, check that all its objects are still there, then write its pointer
             copy as the pointer, only over the pointer it read. Nothing is rebuilt; the version it
             replaces stays readable for open cursors until collected.
`,
    options: ['out', 'endpoint', 'to'],
    run: onTarget('rollback', (target, values) => rollbackCommand(target, values.to as string | undefined)),
  },
  unlock: {
    usage: `  npm run catalogue -- unlock [--out TARGET] [--force]
`,
    summary: `  unlock     Break the target's publish lock when it cannot be valid (unreadable, a lease impossibly far
             ahead, a directory where the lock belongs) or its publish is gone. Refused while the lock
             looks live (exit 4), unless --force: a publish still holding it then stops writing within
             seconds, and the live version is never left half-written.
`,
    options: ['out', 'endpoint', 'force'],
    run: onTarget('unlock', (target, values) => unlockCommand(target, values.force === true)),
  },
  generate: {
    usage: `  npm run catalogue -- generate --modules N --seed S --out DIR
`,
    summary: `  generate   Write a deterministic synthetic snapshot of N modules (for load tests and benchmarks).
`,
    options: ['modules', 'seed', 'out'],
    run: generate,
  },
};
const EVERY_COMMAND = ['help', 'version'];

/** The options a mistyped one is compared with: the command's, or any command's when there is none yet. */
function optionCandidates(command: string | undefined): string[] {
  const own =
    command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command]!.options : undefined;
  return [...(own ?? Object.keys(OPTIONS)), ...EVERY_COMMAND];
}

/**
 * Run the CLI with `argv` (without node and script); resolves to the exit code.
 * @example await main(['validate', '--source', 'fixtures/catalogue']) // → 0
 */
export async function main(argv: readonly string[], options: CommandOptions = {}): Promise<number> {
  try {
    const { command, values, positionals } = parseCommandLine(argv, OPTIONS, optionCandidates);
    if (values.version && !values.help) {
      process.stdout.write(
        `catalogue builder ${packageJson.version} (${packageJson.name}), Node.js ${process.version}\n`,
      );
      return EXIT.ok;
    }
    if (values.help || command === 'help' || command === undefined) {
      process.stdout.write(helpText(Object.values(COMMANDS)));
      return command === undefined && !values.help ? EXIT.usage : EXIT.ok;
    }
    const wanted = findCommand(COMMANDS, command, 'unknown command ');
    const extra = positionals[wanted.argument === undefined ? 1 : 2];
    if (extra !== undefined) throw new UsageError(`unexpected argument ${extra}`);
    checkOptionsApply(
      values,
      { takes: wanted.options, everyCommand: EVERY_COMMAND },
      (name) => `--${name} does not apply to ${command} (${command} takes ${optionList(wanted.options)})`,
    );
    return await wanted.run(values, options, positionals[1]);
  } catch (error) {
    if (!isUsageError(error)) throw error;
    process.stderr.write(`${errorMessage(error)}\nrun with --help for usage\n`);
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
