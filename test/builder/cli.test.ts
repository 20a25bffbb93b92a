/** What `npm run catalogue` answers to a mistake: exit 2, the closest valid command or option, no stack trace. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EXIT, main } from '../../builder/cli.js';

/** main() with its output captured. */
async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((text) => {
    stdout += String(text);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((text) => {
    stderr += String(text);
    return true;
  });
  const code = await main(argv);
  vi.restoreAllMocks();
  return { code, stdout, stderr };
}
afterEach(() => {
  vi.restoreAllMocks();
});

describe('usage errors', () => {
  it.each([
    [['biuld', '--source', 'x', '--out', 'y'], 'unknown command biuld; did you mean build?'],
    [['valdate', '--source', 'x'], 'unknown command valdate; did you mean validate?'],
    // publish is build under the docs' word for it.
    [['publish'], '--source is required'],
    [['pubilsh'], 'unknown command pubilsh; did you mean publish?'],
    [
      ['deploy'],
      'unknown command deploy (commands: build, publish, repair, validate, upload, failed, retry, versions, rollback, unlock, generate)',
    ],
    [['build', '--sourc', 'x', '--out', 'y'], "unknown option '--sourc'; did you mean '--source'?"],
    [
      ['build', '--source', 'x', '--out', 'y', '--dryrun'],
      "unknown option '--dryrun'; did you mean '--dry-run'?",
    ],
    [
      ['generate', '--modules', '3', '--sed', '1', '--out', 'z'],
      "unknown option '--sed'; did you mean '--seed'?",
    ],
    [['build', '--colour'], "unknown option '--colour'"],
    [
      ['validate', '--source', 'x', '--out', 'y'],
      '--out does not apply to validate (validate takes --source)',
    ],
  ])('%j → %s', async (argv, message) => {
    const { code, stdout, stderr } = await run(argv);

    expect(code).toBe(EXIT.usage);
    expect(stdout).toBe('');
    expect(stderr).toBe(`${message}\nrun with --help for usage\n`);
  });

  it('--version: the package and Node.js versions', async () => {
    const { code, stdout } = await run(['--version']);

    expect(code).toBe(EXIT.ok);
    expect(stdout).toBe(`catalogue builder 0.1.0 (catalogue-read-api), Node.js ${process.version}\n`);
  });

  it('a --source that is missing or a file is named as such, in one line', async () => {
    const missing = await run(['validate', '--source', '/no/such/catalogue']);
    const file = await run(['publish', '--source', 'package.json', '--out', '/tmp/x']);

    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toBe(
      '--source /no/such/catalogue: no such directory\nrun with --help for usage\n',
    );
    expect(file.code).toBe(EXIT.usage);
    expect(file.stderr).toMatch(
      /^--source package\.json: is not a directory: name the folder that holds standards\.json, tags\.json, manufacturers\.json and modules\.json\n/,
    );
  });

  it('--help shows the walk-through of a first publish', async () => {
    const { code, stdout } = await run(['--help']);

    expect(code).toBe(EXIT.ok);
    expect(stdout).toContain('cp -r fixtures/catalogue my-catalogue');
    expect(stdout).toContain('--endpoint "$CATALOGUE_S3_ENDPOINT"');
  });

  it('--help names failed and retry, their options and exit codes', async () => {
    const { stdout } = await run(['--help']);

    expect(stdout).toContain('npm run catalogue -- failed [--out s3://BUCKET] [--after DUR] [--json]');
    expect(stdout).toContain(
      'npm run catalogue -- retry NAME [--out s3://BUCKET] [--force] [--wait DUR] [--json]',
    );
    expect(stdout).toContain('Options of failed and retry');
    expect(stdout).toMatch(/failed: 0 no upload failed or went --after without a report; 8 some did/);
  });

  it('retry and failed take only their own options', async () => {
    const { code, stderr } = await run(['failed', '--force']);

    expect(code).toBe(EXIT.usage);
    expect(stderr).toMatch(
      /^--force does not apply to failed \(failed takes --out, --endpoint, --after, --json/,
    );
    expect((await run(['retry', 'a', '--source', 'x'])).code).toBe(EXIT.usage);
    expect((await run(['failed', 'extra'])).code).toBe(EXIT.usage);
    expect((await run(['failed', '--after', 'soon'])).stderr).toMatch(
      /^--after soon: expected 0 or a number with a unit/,
    );
  });
});
