/**
 * The command kit of both CLIs (`npm run catalogue`, builder/cli.ts; `npm run keys`, admin/cli.ts): one usage
 * error, one parse of the command line over `node:util` parseArgs that answers a mistyped option with the
 * closest one, one lookup of a command in its table, one check that the options given apply to it. Each CLI
 * keeps its own words (the messages below take them), its help and its exit codes.
 */
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { didYouMean } from './suggest.js';

/** A mistake in the command line: the CLI prints the message and a pointer to --help, and exits with 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A usage error of ours, or one of `parseArgs` (a missing value, an unexpected positional…). */
export function isUsageError(error: unknown): boolean {
  return (
    error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true
  );
}

/** What a command line parsed into: the command (the first positional), every option given, the positionals. */
export interface CommandLine<Values> {
  command: string | undefined;
  values: Values;
  positionals: string[];
}

/**
 * Parse `argv` against `options`. Unknown options are found from the tokens first and answered with the closest
 * of `candidates(command)` (Node's own message, "Unknown option '--sourc'", offers no suggestion); the strict
 * parse then catches the rest.
 * @example parseCommandLine(['build', '--sourc', 'x'], OPTIONS, () => ['source']) // throws "unknown option '--sourc'; did you mean '--source'?"
 */
export function parseCommandLine<Options extends ParseArgsOptionsConfig>(
  argv: readonly string[],
  options: Options,
  candidates: (command: string | undefined) => readonly string[],
): CommandLine<ReturnType<typeof parseArgs<{ options: Options; allowPositionals: true }>>['values']> {
  const { tokens } = parseArgs({
    args: [...argv],
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const command = tokens.find((token) => token.kind === 'positional')?.value;
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name in options) continue;
    const names = candidates(command);
    throw new UsageError(
      `unknown option '${token.rawName}'${didYouMean(token.name, names, (name) => `'--${name}'`)}`,
    );
  }
  const { values, positionals } = parseArgs({ args: [...argv], options, allowPositionals: true });
  return { command: positionals[0], values, positionals };
}

/**
 * `table[name]`, or a usage error naming the closest command (else every command): `${unknown}${name}…`, where
 * `unknown` is the CLI's own words ("unknown command ", "unknown command: ").
 * @example findCommand({ build: 1 }, 'biuld', 'unknown command ') // throws 'unknown command biuld; did you mean build?'
 */
export function findCommand<Command>(
  table: Readonly<Record<string, Command>>,
  name: string,
  unknown: string,
): Command {
  const command = Object.hasOwn(table, name) ? table[name] : undefined;
  if (command !== undefined) return command;
  const names = Object.keys(table);
  throw new UsageError(`${unknown}${name}${didYouMean(name, names) || ` (commands: ${names.join(', ')})`}`);
}

/**
 * Refuse the first option given (`values`' defined entries) that is neither one of `takes` nor one of
 * `everyCommand`, with the CLI's own message for it.
 */
export function checkOptionsApply(
  values: Readonly<Record<string, unknown>>,
  applies: { takes: readonly string[]; everyCommand: readonly string[] },
  refusal: (name: string) => string,
): void {
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || applies.everyCommand.includes(name) || applies.takes.includes(name)) continue;
    throw new UsageError(refusal(name));
  }
}

/** `--a, --b`: a command's options as its messages list them. */
export function optionList(names: readonly string[]): string {
  return names.map((name) => `--${name}`).join(', ');
}
