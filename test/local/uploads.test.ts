/**
 * Publishing by upload against the local stack, as a publisher's application or CI meets it: `npm start`
 * (local/uploads.ts) publishes a snapshot uploaded into its S3 with the deployed builder's code, says when a
 * version goes live, and keeps the API serving throughout — an upload published and served; an invalid one
 * publishing nothing and reporting every problem; two in quick succession ending on the newer; one arriving
 * during a CLI publish waiting for it; a killed build leaving the live version and its leftovers collected by
 * the next; a rollback during a cursor walk, the walk staying on its version.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Client } from '../../aws/sdk.js';
import { main as catalogueCli, EXIT } from '../../builder/cli.js';
import { generateSnapshot } from '../../builder/synthetic/generate.js';
import { PRODUCT_S3 } from '../../local/own-servers.js';
import {
  fixtureSnapshot,
  REPO_DIR,
  removeTemporaryDirectories,
  smallSnapshot,
  snapshotArchive,
  temporaryDirectory,
  writeSnapshotFiles,
} from '../helpers/builder.js';
import { get, publishedFixtureIn, type Started, startNpm, stop } from '../helpers/npm-start.js';

const BUCKET = 'catalogue';
let local: string;
let started: Started;
let client: S3Client;
let uploads = 0;

beforeAll(async () => {
  local = temporaryDirectory('uploads-local');
  started = await startNpm(await publishedFixtureIn(local));
  client = s3Client({ endpoint: started.s3Endpoint });
}, 180_000);
afterAll(async () => {
  client?.destroy();
  if (started && started.child.exitCode === null) await stop(started);
  removeTemporaryDirectories();
});

/** Upload an archive as `incoming/<n>-<label>.tar.gz` (names sort in upload order); its report key. */
async function upload(label: string, body: Buffer): Promise<{ key: string; report: string }> {
  const name = `${String(++uploads).padStart(4, '0')}-${label}`;
  await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `incoming/${name}.tar.gz`, Body: body }));
  return { key: `incoming/${name}.tar.gz`, report: `reports/${name}.json` };
}

/** Wait until npm start's output (from `from` on) matches `pattern`; the match. */
async function waitFor(pattern: RegExp, from: number, timeoutMs = 60_000): Promise<RegExpMatchArray> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const match = started.output().slice(from).match(pattern);
    if (match) return match;
    if (performance.now() > end) throw new Error(`no ${pattern} in:\n${started.output().slice(from)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function report(key: string): Promise<Record<string, unknown>> {
  const read = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return JSON.parse(await read.Body!.transformToString());
}

const moduleName = async (id: number) =>
  JSON.parse((await get(`${started.base}/modules/${id}`, started.freshKey)).body).data.name;

describe('npm start publishes uploads', () => {
  it('an upload is published, said to be live, and served by the API', async () => {
    const from = started.output().length;
    const snapshot = fixtureSnapshot();
    snapshot.modules[0]!.name = 'Uploaded A-110-1';
    const { key, report: reportKey } = await upload('renamed', snapshotArchive(snapshot));

    const [, version] = await waitFor(
      new RegExp(`upload ${key}: published version (\\S+) \\(204 modules`),
      from,
    );
    await waitFor(
      new RegExp(
        `Catalogue: version ${version} is live \\(published by \\S+, upload, from snapshot [0-9a-f]{12}\\)`,
      ),
      from,
    );

    expect(await moduleName(snapshot.modules[0]!.id)).toBe('Uploaded A-110-1');
    // Who uploaded it: the principal of the local credentials it was signed with, the same at every upload.
    expect(await report(reportKey)).toMatchObject({
      upload: key,
      outcome: 'published',
      version,
      uploaded_by: 'AWS:S3RVER',
    });
  }, 90_000);

  it('an invalid upload publishes nothing and reports every problem', async () => {
    const from = started.output().length;
    const before = await moduleName(101);
    const broken = fixtureSnapshot();
    broken.modules[0]!.name = 'Never served';
    broken.modules[1]!.hp = 0;
    broken.modules[2]!.manufacturer_id = 999;
    const { key, report: reportKey } = await upload('broken', snapshotArchive(broken, { standards: '[' }));

    await waitFor(new RegExp(`upload ${key}: refused, 3 problems; nothing was written`), from);
    const lines = started.output().slice(from);
    expect(lines).toContain(
      '  standards.json: is not valid JSON: line 1, column 2: Unexpected end of the file',
    );
    expect(lines).toContain(
      `  modules.json: record ${broken.modules[1]!.id}: hp: must be a positive integer (got number 0)`,
    );
    expect(await report(reportKey)).toMatchObject({ outcome: 'invalid', problem_count: 3 });
    expect(await moduleName(101)).toBe(before);
  }, 60_000);

  it('two uploads in quick succession end on the newer', async () => {
    const from = started.output().length;
    const first = smallSnapshot(40);
    first.modules[0]!.name = 'First of two';
    const second = smallSnapshot(41);
    second.modules[0]!.name = 'Second of two';
    const older = await upload('first', snapshotArchive(first));
    const { key } = await upload('second', snapshotArchive(second));

    const published = await waitFor(new RegExp(`upload ${key}: published version (\\S+)`), from);
    await waitFor(new RegExp(`Catalogue: version ${published[1]} is live`), from);

    expect(await moduleName(first.modules[0]!.id)).toBe('Second of two');
    // The first was published before the second came in, or superseded by it: never live after it. Its
    // outcome, once logged, says which; published, its line comes before the second's.
    const firstOutcome = await waitFor(
      new RegExp(`upload ${older.key}: (published version|superseded)`),
      from,
    );
    const output = started.output().slice(from);
    expect(
      firstOutcome[1] === 'superseded' || output.indexOf(firstOutcome[0]) < output.indexOf(published[0]),
      output,
    ).toBe(true);
    expect(await moduleName(first.modules[0]!.id)).toBe('Second of two');
  }, 60_000);

  it('an upload during a CLI publish waits for it, then publishes; neither breaks the live version', async () => {
    const from = started.output().length;
    const cliSnapshot = generateSnapshot({ modules: 150, seed: 7 });
    const cli = spawn(
      process.execPath,
      [
        'builder/launch.mjs',
        'publish',
        '--source',
        writeSnapshotFiles(cliSnapshot),
        '--out',
        `s3://${BUCKET}/`,
        '--endpoint',
        started.s3Endpoint,
      ],
      { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let cliOutput = '';
    cli.stdout.on('data', (chunk) => {
      cliOutput += chunk;
    });
    const cliExit = new Promise<number | null>((resolve) => cli.once('exit', resolve));
    // Once the CLI holds the lock, upload.
    for (let i = 0; i < 300; i++) {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'publish.lock' }));
      if (listed.KeyCount) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const uploaded = smallSnapshot(42);
    uploaded.modules[0]!.name = 'Uploaded during a CLI publish';
    const { key } = await upload('during-cli', snapshotArchive(uploaded));

    await waitFor(/waiting for the other publish to finish/, from);
    expect(await cliExit).toBe(EXIT.ok);
    expect(cliOutput).toMatch(/^published \S+ to s3:\/\/catalogue\/: /);
    // npm start says when the CLI's version goes live too, naming the CLI.
    await waitFor(
      new RegExp(
        `Catalogue: version ${cliOutput.split(' ')[1]} is live \\(published by \\S+, cli, from snapshot`,
      ),
      from,
    );
    const [, version] = await waitFor(new RegExp(`upload ${key}: published version (\\S+)`), from, 90_000);
    await waitFor(new RegExp(`Catalogue: version ${version} is live`), from);
    expect(await moduleName(uploaded.modules[0]!.id)).toBe('Uploaded during a CLI publish');
  }, 120_000);

  it('a rollback during a cursor walk: the walk stays on its version, new walks see the rolled-back one', async () => {
    const from = started.output().length;
    const walk = async (url: string) => JSON.parse((await get(url, started.freshKey)).body);
    const first = await walk(`${started.base}/modules?limit=10&fields=name`);
    const walkedNames = first.data.map((m: { name: string }) => m.name);

    const rolledBack = await captured(() =>
      catalogueCli(['rollback', '--out', `s3://${BUCKET}/`, '--endpoint', started.s3Endpoint]),
    );
    expect(rolledBack.code).toBe(EXIT.ok);
    const [, version] = await waitFor(
      /Catalogue: version (\S+) is live \(made live again by \S+ \(rollback\)\)/,
      from,
    );
    expect(rolledBack.out).toContain(`to ${version} `);

    let cursor: string | null = first.page.next_cursor;
    const ids = first.data.map((m: { id: number }) => m.id);
    while (cursor) {
      const page = await walk(`${started.base}/modules?limit=10&fields=name&cursor=${cursor}`);
      expect(page.error).toBeUndefined();
      ids.push(...page.data.map((m: { id: number }) => m.id));
      cursor = page.page.next_cursor;
    }
    // The walk began on the version published from the 42-module upload, and ended on it.
    expect(ids).toHaveLength(42);
    expect(walkedNames[0]).toBe('Uploaded during a CLI publish');
    // A new walk sees the version live before it: the CLI's 150 modules.
    const fresh = await walk(`${started.base}/modules?limit=1`);
    expect(fresh.data[0].id).toBeDefined();
    expect((await walk(`${started.base}/modules?limit=100`)).page.next_cursor).not.toBeNull();
  }, 60_000);

  it('a killed build leaves the live version intact; the next publish collects what it left', async () => {
    // The builder as the function runs it (builder/lambda.ts), in a process of its own against npm start's S3,
    // killed mid-build as Lambda kills a timed-out invocation (S3 lives on). Its uploads go to a prefix npm
    // start does not watch, so only that process builds it.
    const firstModule = async () =>
      JSON.parse((await get(`${started.base}/modules?limit=1`, started.freshKey)).body).data[0];
    const live = await firstModule();
    const big = generateSnapshot({ modules: 800, seed: 11 });
    const key = 'incoming-killed/big.tar.gz';
    const put = await client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: snapshotArchive(big) }),
    );
    const event = {
      Records: [
        {
          eventName: 'ObjectCreated:Put',
          eventTime: new Date().toISOString(),
          userIdentity: { principalId: 'AWS:AROATEST:killed' },
          s3: { bucket: { name: BUCKET }, object: { key, eTag: put.ETag!.replace(/"/g, '') } },
        },
      ],
    };
    const script =
      "const { handler } = await import('./builder/lambda.ts'); " +
      `await handler(${JSON.stringify(event)}, { getRemainingTimeInMillis: () => 900000 });`;
    const builder = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO_DIR,
      env: {
        ...process.env,
        CATALOGUE_BUCKET: BUCKET,
        CATALOGUE_PREFIX: '',
        INCOMING_PREFIX: 'incoming-killed/',
        S3_ENDPOINT: started.s3Endpoint,
        EVENT_BUS_NAME: 'none',
      },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => builder.once('exit', resolve));
    for (let i = 0; ; i++) {
      const listed = await client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'versions/pending-' }),
      );
      if (listed.KeyCount) break;
      if (i > 1200) throw new Error(`the build of ${key} never started uploading`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    builder.kill('SIGKILL');
    await exited;
    expect(await firstModule()).toEqual(live);

    const from = started.output().length;
    const { key: nextKey } = await upload('after-kill', snapshotArchive(smallSnapshot(43)));
    const [, version] = await waitFor(
      new RegExp(`upload ${nextKey}: published version (\\S+)`),
      from,
      90_000,
    );
    // Its lock was taken over (its process is gone), its journaled uploads collected.
    expect(started.output().slice(from)).toMatch(
      /warning: took over the publish lock of the target from \S+ pid \d+: its process \(pid \d+\) is gone/,
    );
    expect(started.output().slice(from)).toMatch(
      /warning: collected what interrupted publishes left: \d+ temporary files, [1-9]\d* objects/,
    );
    const pending = await client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'versions/pending-' }),
    );
    expect(pending.KeyCount ?? 0).toBe(0);
    await waitFor(new RegExp(`Catalogue: version ${version} is live`), from);
  }, 180_000);
});

describe('uploads that came while npm start was not running', () => {
  it('are handled when it starts, oldest first: the newest is published, the older superseded', async () => {
    await stop(started);
    // Its S3's data directory, served by a bare local S3 while npm start is down (another machine's CI uploading),
    // asked what npm start asks of its own (the uploader of each upload kept).
    const down = await startS3(BUCKET, { directory: join(local, 's3'), ...PRODUCT_S3 });
    const bare = s3Client({ endpoint: down.endpoint });
    const older = smallSnapshot(44);
    older.modules[0]!.name = 'Uploaded while down, older';
    const newer = smallSnapshot(45);
    newer.modules[0]!.name = 'Uploaded while down, newer';
    for (const [name, snapshot] of [
      ['0100-older', older],
      ['0101-newer', newer],
    ] as const) {
      await bare.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `incoming/${name}.tar.gz`,
          Body: snapshotArchive(snapshot),
        }),
      );
    }
    bare.destroy();
    await down.stop();

    started = await startNpm(local);
    client.destroy();
    client = s3Client({ endpoint: started.s3Endpoint });

    await waitFor(
      /uploads: 2 came while npm start was not running: handling them, oldest first \(the newest wins\)/,
      0,
    );
    await waitFor(
      /upload incoming\/0100-older\.tar\.gz: superseded by the newer incoming\/0101-newer\.tar\.gz/,
      0,
    );
    const [, version] = await waitFor(
      /upload incoming\/0101-newer\.tar\.gz: published version (\S+)/,
      0,
      90_000,
    );
    await waitFor(new RegExp(`Catalogue: version ${version} is live`), 0);
    expect(await moduleName(newer.modules[0]!.id)).toBe('Uploaded while down, newer');
    // Who uploaded it, as its event said, though the event was lost with the last run (issue 47).
    expect(await report('reports/0101-newer.json')).toMatchObject({
      outcome: 'published',
      uploaded_by: 'AWS:S3RVER',
    });
    // Handled once: the next start finds their reports and does nothing again. Its uploads are taken one at a
    // time, what came while it was down first: once an upload made after the start is handled, that is done.
    await stop(started);
    started = await startNpm(local);
    client.destroy();
    client = s3Client({ endpoint: started.s3Endpoint });
    const after = await upload('after-restart', snapshotArchive(newer));
    await waitFor(new RegExp(`upload ${after.key}: `), 0);
    expect(started.output()).not.toMatch(/came while npm start was not running/);
  }, 240_000);
});

/** Run `task` with stdout and stderr captured (the CLI writes to them). */
async function captured(task: () => Promise<number>): Promise<{ code: number; out: string }> {
  let out = '';
  const write = (text: unknown) => {
    out += String(text);
    return true;
  };
  const [stdout, stderr] = [process.stdout.write, process.stderr.write];
  process.stdout.write = write as typeof process.stdout.write;
  process.stderr.write = write as typeof process.stderr.write;
  try {
    return { code: await task(), out };
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
}
