/**
 * `npm run smoke` against a real `npm start` (one, shared by the suite): every check passes, in the table and
 * in `--json`; with `--stack`, the URLs and the catalogue location come from the stack's outputs, read with the
 * SDK from a loopback CloudFormation stand-in; with credentials the admin API refuses, the admin check fails
 * by name; and once the stack is stopped, every check that needs it fails, named, with exit code 1.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_NAMES } from '../../ops/checks.js';
import { KEY_OPTION_REFUSED, main, type SmokeReport } from '../../ops/smoke.js';
import { npmStartSuite, type Started, stop } from '../helpers/npm-start.js';

/** Run the smoke command in this process; its exit code and what it printed. */
async function smoke(argv: string[], env: Record<string, string | undefined>) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, env, { out: (text) => out.push(text), err: (text) => err.push(text) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A CloudFormation stand-in answering DescribeStacks (the Query protocol's XML) with `outputs`. */
async function cloudFormation(
  outputs: Record<string, string>,
): Promise<{ endpoint: string; server: Server }> {
  const members = Object.entries(outputs)
    .map(
      ([key, value]) => `<member><OutputKey>${key}</OutputKey><OutputValue>${value}</OutputValue></member>`,
    )
    .join('');
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const named = /StackName=([^&]+)/.exec(body)?.[1];
      response.writeHead(named === 'Catalogue' ? 200 : 400, { 'content-type': 'text/xml' });
      response.end(
        named === 'Catalogue'
          ? `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member><StackName>Catalogue</StackName><StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/Catalogue/1</StackId><CreationTime>2026-11-01T00:00:00Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus><Outputs>${members}</Outputs></member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DescribeStacksResponse>`
          : `<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${named} does not exist</Message></Error><RequestId>r</RequestId></ErrorResponse>`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const suite = npmStartSuite('smoke', { published: true });
let started: Started;
/** What npm start printed to paste into another shell: CATALOGUE_URL, _KEY, _S3_ENDPOINT, _ADMIN_*. */
let exported: Record<string, string>;
/** The environment of a shell with those lines pasted, and nothing of this process's AWS settings. */
let shell: Record<string, string | undefined>;

beforeAll(async () => {
  started = await suite.start();
  exported = started.exports;
  shell = { PATH: process.env.PATH, AWS_REGION: 'us-east-1', ...exported };
}, 180_000);
afterAll(async () => {
  if (started.child.exitCode === null) await stop(started);
});

describe('npm run smoke against npm start', () => {
  it('passes every check, the live version and the admin API included, within seconds', async () => {
    const begun = performance.now();
    const { code, out, err } = await smoke(['--catalogue', 's3://catalogue'], shell);

    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain(`Smoke check of ${exported.CATALOGUE_URL}`);
    for (const name of CHECK_NAMES) expect(out).toMatch(new RegExp(`^${name.replace('/', '\\/')} +ok `, 'm'));
    expect(out).toMatch(/^live version +ok +\d+ ms +[A-Za-z0-9_-]{22}, live for /m);
    expect(out).toMatch(/smoke check passed$/);
    expect(out).not.toContain(exported.CATALOGUE_KEY);
    expect(performance.now() - begun).toBeLessThan(30_000);
  });

  it('fails on what it skipped (nothing names the admin API or the catalogue), unless --allow-skipped', async () => {
    const { CATALOGUE_ADMIN_URL: _admin, ...noAdmin } = shell;
    const strict = await smoke(['--json'], noAdmin);
    const allowed = await smoke(['--json', '--allow-skipped'], noAdmin);
    const table = await smoke([], noAdmin);

    const report = JSON.parse(strict.out) as SmokeReport;
    expect(strict.code).toBe(1);
    expect(report).toMatchObject({ ok: false, failed: [], skipped: ['admin API', 'live version'] });
    expect(report.checks.map((check) => check.name)).toEqual([...CHECK_NAMES]);
    expect(allowed.code).toBe(0);
    expect(JSON.parse(allowed.out)).toMatchObject({ ok: true, skipped: ['admin API', 'live version'] });
    expect(table.code).toBe(1);
    expect(table.err).toBe(
      'smoke check incomplete: not checked: admin API, live version (give what they need, or --allow-skipped)',
    );
  });

  it("reads the URLs and the catalogue location from a stack's outputs with --stack", async () => {
    const credentialsFile = join(suite.directory('aws'), 'credentials');
    writeFileSync(
      credentialsFile,
      '[default]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = example\n',
    );
    const stand = await cloudFormation({
      ApiUrl: exported.CATALOGUE_URL!,
      ReferenceUrl: `${new URL(exported.CATALOGUE_URL!).origin}/docs`,
      AdminApiUrl: exported.CATALOGUE_ADMIN_URL!,
      CatalogueUri: 's3://catalogue/',
    });
    try {
      const env = {
        PATH: process.env.PATH,
        CATALOGUE_KEY: exported.CATALOGUE_KEY,
        CATALOGUE_ADMIN_ACCESS_KEY_ID: exported.CATALOGUE_ADMIN_ACCESS_KEY_ID,
        CATALOGUE_ADMIN_SECRET_ACCESS_KEY: exported.CATALOGUE_ADMIN_SECRET_ACCESS_KEY,
        // The SDK's chain finds the caller's credentials in a profile (npm start's S3 refuses any others).
        AWS_SHARED_CREDENTIALS_FILE: credentialsFile,
        AWS_CONFIG_FILE: credentialsFile,
        AWS_ENDPOINT_URL_CLOUDFORMATION: stand.endpoint,
      };
      // The SDK reads its endpoint and credentials from this process's environment.
      const saved = { ...process.env };
      for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE'])
        delete process.env[name];
      Object.assign(process.env, env);
      let run: Awaited<ReturnType<typeof smoke>>;
      let missing: Awaited<ReturnType<typeof smoke>>;
      let signed: Awaited<ReturnType<typeof smoke>>;
      try {
        run = await smoke(
          ['--stack', 'Catalogue', '--endpoint', exported.CATALOGUE_S3_ENDPOINT!, '--json'],
          env,
        );
        missing = await smoke(['--stack', 'Catalogu'], env);
        signed = await smoke(
          ['--stack', 'Catalogue', '--admin', '--endpoint', exported.CATALOGUE_S3_ENDPOINT!],
          env,
        );
      } finally {
        process.env = saved;
      }
      const report = JSON.parse(run.out) as SmokeReport;

      expect(report.failed, run.out).toEqual([]);
      expect(run.code).toBe(0);
      expect(report.api).toBe(exported.CATALOGUE_URL);
      expect(report.checks.every((check) => check.verdict === 'pass')).toBe(true);
      // Read access only: the admin API is checked as refusing an unsigned request; --admin signs one.
      expect(report.checks.find((check) => check.name === 'admin API')?.detail).toMatch(
        /^unsigned GET refused with 403/,
      );
      expect(signed.code, signed.out).toBe(0);
      expect(signed.out).toMatch(/^admin API +ok +\d+ ms +signed GET of an unknown key: 404 key_not_found$/m);
      expect(missing.code).toBe(2);
      expect(missing.err).toContain('--stack Catalogu in us-east-1: Stack with id Catalogu does not exist');
    } finally {
      stand.server.close();
    }
  });

  it('fails the admin check by name when the caller signs with credentials the admin API refuses', async () => {
    const { code, err, out } = await smoke([], {
      ...shell,
      CATALOGUE_ADMIN_SECRET_ACCESS_KEY: 'not-the-secret',
    });

    expect(code).toBe(1);
    expect(out).toMatch(/^admin API +FAIL +\d+ ms +403 for a signed GET/m);
    expect(err).toBe('smoke check failed: admin API');
  });

  it('fails once the stack is stopped, naming every check that needs it', async () => {
    await stop(started);

    const { code, out, err } = await smoke(['--catalogue', 's3://catalogue', '--timeout', '10'], shell);

    expect(code).toBe(1);
    expect(err).toBe(`smoke check failed: ${CHECK_NAMES.join(', ')}`);
    expect(out).toMatch(
      /^edge 401 +FAIL +\d+ ms +127\.0\.0\.1:\d+: connection refused \(is it running\?\)$/m,
    );
    expect(out).toMatch(/^304 revalidation +FAIL +\d+ ms +not checked: the 200 above failed$/m);
  });
});

describe('npm run smoke, used wrongly', () => {
  it.each([
    [['--urll', 'x'], "unknown option '--urll'; did you mean '--url'?"],
    [['--url', 'ftp://x/v1'], '--url ftp://x/v1: expected an https:// (or http://) URL'],
    [
      ['--url', 'https://x/v1'],
      "a key to read with: CATALOGUE_KEY=pk_live_… (or --stack, which reads the stack's check key)",
    ],
    [[], 'what to check: --url URL (or CATALOGUE_URL), or --stack NAME'],
    [['--url', 'https://x/v1', '--stack', 'S'], 'give --url or --stack, not both'],
    [['--timeout', '0', '--url', 'https://x/v1'], '--timeout 0: 1 to 300 seconds'],
    [['extra'], "unexpected argument 'extra'"],
  ])('%j is a usage error (exit 2)', async (argv, message) => {
    // A key in the environment, except where its absence is the error.
    const key = message.startsWith('a key to read with') ? {} : { CATALOGUE_KEY: 'k' };
    const { code, err } = await smoke(argv, { PATH: process.env.PATH, ...key });

    expect(code).toBe(2);
    expect(err).toBe(`error: ${message}\n(run with --help for usage)`);
  });

  it.each([['--key', 'pk_live_AAAAAAAAAAAAAAAAAAAAAA'], ['--key=pk_live_AAAAAAAAAAAAAAAAAAAAAA']])(
    'refuses a key on the command line (%s), saying why, without echoing it',
    async (...argv) => {
      const { code, err, out } = await smoke(['--url', 'https://x/v1', ...argv], {
        PATH: process.env.PATH,
        CATALOGUE_KEY: 'pk_live_BBBBBBBBBBBBBBBBBBBBBB',
      });

      expect(code).toBe(2);
      expect(err).toBe(`error: ${KEY_OPTION_REFUSED}\n(run with --help for usage)`);
      expect(`${err}${out}`).not.toContain('AAAAAAAAAAAAAAAAAAAAAA');
    },
  );
});
