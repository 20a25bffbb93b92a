/** The command kit both CLIs share (cli/kit.ts): the messages each CLI words its own way, from one mechanism. */
import { describe, expect, it } from 'vitest';
import { checkOptionsApply, findCommand, isUsageError, parseCommandLine, UsageError } from '../../cli/kit.js';

const OPTIONS = {
  source: { type: 'string' },
  'dry-run': { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

describe('the command kit', () => {
  it('parses a command line: the command, its options and positionals', () => {
    expect(parseCommandLine(['build', '--source', 'x', 'y'], OPTIONS, () => [])).toEqual({
      command: 'build',
      values: { source: 'x' },
      positionals: ['build', 'y'],
    });
  });

  it("answers a mistyped option with the closest of the command's, and an unknown one with none", () => {
    const candidates = (command: string | undefined) => (command === 'build' ? ['source', 'dry-run'] : []);
    expect(() => parseCommandLine(['build', '--dryrun'], OPTIONS, candidates)).toThrow(
      new UsageError("unknown option '--dryrun'; did you mean '--dry-run'?"),
    );
    expect(() => parseCommandLine(['other', '--dryrun'], OPTIONS, candidates)).toThrow(
      new UsageError("unknown option '--dryrun'"),
    );
  });

  it('finds a command, or names the closest one, else every one, in the words given', () => {
    const table = { build: 1, validate: 2 };
    expect(findCommand(table, 'validate', 'unknown command ')).toBe(2);
    expect(() => findCommand(table, 'biuld', 'unknown command: ')).toThrow(
      new UsageError('unknown command: biuld; did you mean build?'),
    );
    expect(() => findCommand(table, 'deploy', 'unknown command ')).toThrow(
      new UsageError('unknown command deploy (commands: build, validate)'),
    );
    expect(() => findCommand(table, 'toString', 'unknown command ')).toThrow(UsageError);
  });

  it("refuses the first option that does not apply, with the CLI's message", () => {
    const applies = { takes: ['source'], everyCommand: ['help'] };
    expect(() =>
      checkOptionsApply({ source: 'x', help: true, json: undefined }, applies, String),
    ).not.toThrow();
    expect(() => checkOptionsApply({ source: 'x', out: 'y' }, applies, (name) => `no --${name}`)).toThrow(
      new UsageError('no --out'),
    );
  });

  it("counts parseArgs' own errors as usage errors", () => {
    let parseError: unknown;
    try {
      parseCommandLine(['--source'], OPTIONS, () => []);
    } catch (error) {
      parseError = error;
    }
    expect(isUsageError(parseError)).toBe(true);
    expect(isUsageError(new Error('a fault'))).toBe(false);
  });
});
