/**
 * The commands a user types in a checkout running `npm start`, with no target: `npm run catalogue -- versions |
 * rollback | unlock` (no `--out`) and `npm run keys -- list` (no KEYS_TABLE, COUNTERS_TABLE, DYNAMODB_ENDPOINT)
 * act on that npm start — what it records in its data directory (local/start.ts, aws/local-stack.ts) — as
 * `upload` does; an explicit target still wins; once it has stopped, each refuses at once, saying to start it or
 * to name a target. Run as the npm scripts run them (builder/launch.mjs, admin/cli.ts), as child processes.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STACK_FILE } from '../../aws/local-stack.js';
import { EXIT } from '../../builder/exit.js';
import { fixtureSnapshot, temporaryDirectory, writeSnapshotFiles } from '../helpers/builder.js';
import { npmStartSuite, publishInto, type Started, stop } from '../helpers/npm-start.js';

const ROOT = resolve(import.meta.dirname, '../..');
const suite = npmStartSuite('commands', { published: true });
let started: Started;
let stopped = false;
/** The environment of a shell in this checkout: no target named, the suite's data directory as `.local/`. */
let shell: Record<string, string | undefined>;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** A command as its npm script runs it, in the checkout, with `env`. */
async function command(program: string[], args: string[], env = shell): Promise<Ran> {
  return promisify(execFile)(process.execPath, [...program, ...args], {
    cwd: ROOT,
    env,
    timeout: 60_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}
const catalogue = (args: string[], env?: Record<string, string | undefined>) =>
  command(['builder/launch.mjs'], args, env);
const keys = (args: string[], env?: Record<string, string | undefined>) =>
  command(['--import', 'tsx', 'admin/cli.ts'], args, env);

beforeAll(async () => {
  const { KEYS_TABLE: _k, COUNTERS_TABLE: _c, DYNAMODB_ENDPOINT: _d, ...rest } = process.env;
  shell = { ...rest, CATALOGUE_LOCAL_DIR: suite.local };
  started = await suite.start();
  // A second version, so that there is one to roll back to.
  const edited = fixtureSnapshot();
  edited.modules[0]!.name = 'A-110-1 (edited)';
  expect(await publishInto(started, writeSnapshotFiles(edited))).toBe(EXIT.ok);
}, 240_000);

afterAll(async () => {
  if (started && !stopped) await stop(started);
}, 30_000);

describe('with npm start running, no target named', () => {
  it('versions lists what it serves, saying whose target it is', async () => {
    const listed = await catalogue(['versions']);
    const json = await catalogue(['versions', '--json']);

    expect(listed.code).toBe(0);
    expect(listed.stderr).toContain(
      `no --out: this checkout's npm start, s3://catalogue in its local S3 at ${started.s3Endpoint} (data directory ${suite.local})`,
    );
    expect(listed.stdout).toMatch(/^s3:\/\/catalogue\/: 2 retained versions, newest first; \* is live\n\* /);
    expect(listed.stdout).toContain('(npm start)');
    const listing = JSON.parse(json.stdout) as { live: string; versions: { version: string }[] };
    expect(listing.versions).toHaveLength(2);
    expect(listing.live).toBe(listing.versions[0]!.version);
  });

  it('rollback makes the one before live again, and npm start serves it', async () => {
    const { versions } = JSON.parse((await catalogue(['versions', '--json'])).stdout) as {
      versions: { version: string }[];
    };

    const rolled = await catalogue(['rollback']);

    expect(rolled.code).toBe(0);
    expect(rolled.stdout).toMatch(new RegExp(`^rolled back s3://catalogue/ to ${versions[1]!.version} `));
    // The proxy re-reads the pointer within its TTL (1 s with npm start): wait for it, bounded.
    let name = '';
    for (let tries = 0; tries < 50 && name !== 'A-110-1'; tries++) {
      const answer = await fetch(`${started.base}/modules/101`, {
        headers: { authorization: `Bearer ${started.freshKey}` },
      });
      name = ((await answer.json()) as { data: { name: string } }).data.name;
      if (name !== 'A-110-1') await new Promise((done) => setTimeout(done, 200));
    }
    expect(name).toBe('A-110-1');
  });

  it('unlock finds no lock to break', async () => {
    const unlocked = await catalogue(['unlock']);

    expect(unlocked).toMatchObject({
      code: 0,
      stdout: 's3://catalogue/publish.lock: no publish lock; nothing to do\n',
    });
  });

  it('npm run keys -- list lists its keys, the dev key among them, saying whose tables they are', async () => {
    const listed = await keys(['list', '--json']);

    expect(listed.code).toBe(0);
    expect(listed.stderr).toContain(
      `this checkout's npm start, tables catalogue-keys and catalogue-counters on its local DynamoDB at http://127.0.0.1:`,
    );
    const devKeyId = (
      JSON.parse(readFileSync(join(suite.local, 'dev-key.json'), 'utf8')) as { key_id: string }
    ).key_id;
    const ids = (JSON.parse(listed.stdout) as { key_id: string }[]).map((key) => key.key_id);
    expect(ids).toContain(devKeyId);
    expect(ids.length).toBeGreaterThanOrEqual(3);
  });

  it('an explicit target wins: --out another directory, tables named in the environment', async () => {
    const elsewhere = temporaryDirectory('commands-elsewhere');

    const versions = await catalogue(['versions', '--out', elsewhere]);
    const listed = await keys(['list'], { ...shell, KEYS_TABLE: 'no-such-table', COUNTERS_TABLE: 'c' });

    expect(versions).toMatchObject({ code: 0, stdout: `${elsewhere}: nothing is published here\n` });
    expect(versions.stderr).not.toContain('npm start');
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain('no-such-table');
  });

  it('--endpoint without --out is refused: the target would be npm start’s, endpoint and all', async () => {
    const refused = await catalogue(['versions', '--endpoint', 'http://127.0.0.1:1']);

    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toContain('--endpoint goes with --out');
  });
});

describe('once npm start has stopped', () => {
  it('every command refuses at once, saying to start it or to name a target', async () => {
    await stop(started);
    stopped = true;
    const gone = `no npm start is running on ${suite.local} (none has recorded one there): start it (npm start) in another shell`;

    for (const name of ['versions', 'rollback', 'unlock']) {
      const refused = await catalogue([name]);
      expect(refused.code, name).toBe(EXIT.publishFailed);
      expect(refused.stderr, name).toBe(
        `${name}: ${gone}, or name the target with --out DIR or --out s3://BUCKET/PREFIX (and --endpoint URL)\n`,
      );
    }
    const listed = await keys(['list']);
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain(`error: ${gone}, or name the tables with KEYS_TABLE and COUNTERS_TABLE`);
    expect(() => readFileSync(join(suite.local, STACK_FILE))).toThrow();
  }, 60_000);
});
