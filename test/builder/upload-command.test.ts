/**
 * `npm run catalogue -- upload` against a real `npm start` (local/uploads.ts publishes what arrives in its
 * incoming/ with the stack builder's code), as a publisher and a CI job meet it: with no --out it finds the
 * checkout's npm start by its data directory, with no credentials set; a valid edit is published and served; an
 * invalid snapshot is refused before anything is uploaded, every problem named; --json is one JSON object; an
 * upload overtaken by a newer one says superseded (exit 6); a wait that runs out says timed out (exit 7); a report
 * left by an earlier upload of the same name is not taken for this one's.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LOOPBACK_CREDENTIALS } from '../../aws/env.js';
import { recordLocalStack } from '../../aws/local-stack.js';
import { s3Client } from '../../aws/sdk.js';
import { main as catalogueCli, EXIT } from '../../builder/cli.js';
import { acquirePublishLock } from '../../builder/publish/lock.js';
import type { UploadResult } from '../../builder/upload-command.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import {
  fixtureSnapshot,
  REPO_DIR,
  removeTemporaryDirectories,
  snapshotArchive,
  temporaryDirectory,
  writeSnapshotFiles,
} from '../helpers/builder.js';
import { codeBlocks, readPage, sectionAt } from '../helpers/manual.js';
import { get, PARTNER, publishedFixtureIn, type Started, startNpm, stop } from '../helpers/npm-start.js';
import { linesShow, varying } from '../helpers/shown.js';

const run = promisify(execFile);
const BUCKET = 'catalogue';
let local: string;
let started: Started;
let client: S3Client;

beforeAll(async () => {
  local = temporaryDirectory('upload-command-local');
  started = await startNpm(await publishedFixtureIn(local));
  client = s3Client({ endpoint: started.s3Endpoint });
  vi.stubEnv('CATALOGUE_LOCAL_DIR', local);
}, 180_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  client?.destroy();
  if (started && started.child.exitCode === null) await stop(started);
  removeTemporaryDirectories();
});

/** The CLI in this process: exit code, stdout and stderr (`printed` sees stderr as it is written). */
function upload(
  ...args: string[]
): Promise<{ code: number; out: string; err: string }> & { printed: () => string } {
  let out = '';
  let err = '';
  const [stdout, stderr] = [process.stdout.write, process.stderr.write];
  process.stdout.write = ((text: unknown) => {
    out += String(text);
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((text: unknown) => {
    err += String(text);
    return true;
  }) as typeof process.stderr.write;
  const running = (async () => {
    try {
      return { code: await catalogueCli(['upload', ...args]), out, err };
    } finally {
      process.stdout.write = stdout;
      process.stderr.write = stderr;
    }
  })();
  return Object.assign(running, { printed: () => err });
}

/** The publisher's guide's transcript of an upload into npm start (docs/publishing.md), without its command line. */
function guideTranscript(): string[] {
  const guide = readPage('docs/publishing.md');
  const block = codeBlocks(guide).find(
    (candidate) =>
      candidate.info === 'console' && sectionAt(guide, candidate.line) === 'Uploading in one command',
  );
  if (!block) throw new Error('docs/publishing.md shows no upload');
  return block.lines.filter((line) => !line.startsWith('$ '));
}

/** The `run:` script of the publisher's guide's CI job (docs/publishing.md, "A CI job, end to end"), dedented. */
function guideJobStep(): string {
  const guide = readPage('docs/publishing.md');
  const job = codeBlocks(guide).find(
    (candidate) =>
      candidate.info === 'yaml' && sectionAt(guide, candidate.line) === 'Uploading in one command',
  );
  const at = job?.lines.findIndex((line) => line.trim() === 'run: |') ?? -1;
  if (!job || at < 0) throw new Error('docs/publishing.md shows no CI job step');
  const script = job.lines.slice(at + 1);
  const indent = /^ */.exec(script[0]!)![0].length;
  return script.map((line) => line.slice(indent)).join('\n');
}

async function incoming(): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'incoming/' }));
  return (listed.Contents ?? []).map((object) => object.Key!);
}

/**
 * The module's name as the API serves it, read with the partner key: the polls below make many reads, and the
 * free tier's 60 a minute ran out under a busy machine (a 429, read as a missing module).
 */
async function moduleName(id: number): Promise<string> {
  const answer = await get(`${started.base}/modules/${id}`, PARTNER);
  if (answer.status !== 200) throw new Error(`GET /modules/${id} answered ${answer.status}: ${answer.body}`);
  return JSON.parse(answer.body).data.name;
}

/**
 * The module's name once the API answers from the version just published: the proxy may answer from the pointer
 * it read before for its pointer TTL (npm start: 1 s), so read again for a few seconds until `expected` shows.
 */
async function servedName(id: number, expected: string, withinMs = 5_000): Promise<string> {
  const until = Date.now() + withinMs;
  for (;;) {
    const name = await moduleName(id);
    if (name === expected || Date.now() > until) return name;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('upload into npm start', () => {
  it('a valid edit, as `npm run catalogue -- upload` runs with nothing set: exit 0, published, served', async () => {
    const edited = fixtureSnapshot();
    edited.modules[0]!.name = 'A-110-1 uploaded';
    const folder = writeSnapshotFiles(edited);

    const { stdout, stderr } = await run('npm', ['run', '-s', 'catalogue', '--', 'upload', folder], {
      cwd: REPO_DIR,
      env: { ...process.env, CATALOGUE_LOCAL_DIR: local },
    });

    expect(stderr).toMatch(
      new RegExp(
        `^checked ${folder}: valid \\(204 modules, 25 manufacturers, 6 standards, 45 tags; snapshot [0-9a-f]{12}\\), packed [\\d.]+ kB$`,
        'm',
      ),
    );
    expect(stderr).toMatch(
      /^uploaded incoming\/\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{12}\.tar\.gz to s3:\/\/catalogue \(npm start's local S3 at http:\/\/127\.0\.0\.1:\d+, data directory .+\) in [\d.]+ s; waiting for the builder's report \(at most 15 min\)$/m,
    );
    expect(stdout).toMatch(
      /^published version \S{22} \(was \S{22}\): 204 modules; \d+ objects added \([\d.]+ [kM]?B\), 0 removed \(0 B\), incremental build; the builder took [\d.]+ s, [\d.]+ s in all\n$/,
    );
    expect(await servedName(edited.modules[0]!.id, 'A-110-1 uploaded')).toBe('A-110-1 uploaded');
    // The guide's transcript shows what it printed, as a user sees it at the repository root.
    const printed = `${stderr}${stdout}`.replaceAll(folder, 'my-catalogue').replaceAll(local, '.local');
    const transcript = guideTranscript();
    expect(linesShow(transcript.map(varying), printed.trimEnd().split('\n')), printed).toBe(true);
  }, 90_000);

  it('an invalid snapshot: every problem named, exit 1, nothing uploaded', async () => {
    const before = await incoming();
    const broken = fixtureSnapshot();
    broken.modules[1]!.hp = 0;
    broken.modules[2]!.manufacturer_id = 999;
    const folder = writeSnapshotFiles(broken, { standards: '[' });

    const refused = await upload(folder);

    expect(refused.code).toBe(EXIT.invalid);
    expect(refused.err).toContain(
      'standards.json: is not valid JSON: line 1, column 2: Unexpected end of the file\n',
    );
    expect(refused.err).toContain(
      `modules.json: record ${broken.modules[1]!.id}: hp: must be a positive integer (got number 0)\n`,
    );
    expect(refused.err).toContain(
      `modules.json: record ${broken.modules[2]!.id}: manufacturer_id: references manufacturer 999`,
    );
    expect(refused.out).toBe('snapshot refused: 3 problems; nothing was uploaded\n');
    expect(await incoming()).toEqual(before);
  });

  it('an archive the builder would refuse is refused by the same rules, before it is uploaded', async () => {
    const before = await incoming();
    const folder = writeSnapshotFiles(fixtureSnapshot());
    writeFileSync(join(folder, 'notes.txt'), 'not a snapshot file');
    const archive = join(mkdtempSync(join(tmpdir(), 'cat-upload-archive-')), 'snapshot.tar.gz');
    await run('tar', ['czf', archive, '-C', folder, '.']);

    const refused = await upload(archive, '--json');

    expect(refused.code).toBe(EXIT.invalid);
    const result = JSON.parse(refused.out) as UploadResult;
    expect(result).toMatchObject({ outcome: 'invalid', exit_code: 1, upload: null, problem_count: 1 });
    expect(result.problems[0]!.message).toMatch(/notes\.txt.*an unexpected file/);
    expect(await incoming()).toEqual(before);
    rmSync(archive);
  });

  it('--json: one JSON object with the outcome, the version and the builder’s report', async () => {
    const folder = writeSnapshotFiles(fixtureSnapshot());
    const first = await upload(folder, '--json');
    const again = await upload(folder, '--json');

    const a = JSON.parse(first.out) as UploadResult;
    const b = JSON.parse(again.out) as UploadResult;
    expect(first.code).toBe(EXIT.ok);
    expect(a).toMatchObject({ outcome: 'published', exit_code: 0, problems: [], error: null });
    expect(a.report).toMatchObject({ outcome: 'published', upload: a.upload, version: a.version });
    expect(a.report_uri).toBe(
      `s3://catalogue/${a.upload!.replace(/^incoming\/(.*)\.tar\.gz$/, 'reports/$1.json')}`,
    );
    expect(a.seconds.total).toBeGreaterThanOrEqual(a.seconds.wait);
    expect(again.code).toBe(EXIT.ok);
    expect(b).toMatchObject({ outcome: 'unchanged', version: a.version, snapshot: a.snapshot });
  }, 60_000);

  it('a report left by an earlier upload of the same name is not taken for this one’s', async () => {
    // A name that sorts before the time-named uploads: the builder orders uploads of one second by name, and
    // this one must not overtake the next test's.
    const name = '0-reused-name';
    const stale = {
      upload: `incoming/${name}.tar.gz`,
      etag: 'an-older-upload',
      outcome: 'invalid',
      problems: [],
    };
    await client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: `reports/${name}.json`, Body: JSON.stringify(stale) }),
    );
    // And a second later than the previous test's uploads: within one second this name sorts first, so the
    // builder would take theirs for the newer one and supersede it (S3 times uploads to the second).
    await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));

    const result = await upload(writeSnapshotFiles(fixtureSnapshot()), '--name', name, '--json');

    expect(result.code).toBe(EXIT.ok);
    expect(JSON.parse(result.out)).toMatchObject({ outcome: 'unchanged', upload: `incoming/${name}.tar.gz` });
    // The name is taken now: a second upload under it is refused, not written over the first.
    const twice = await upload(writeSnapshotFiles(fixtureSnapshot()), '--name', `${name}.tar.gz`);
    expect(twice.code).toBe(EXIT.usage);
    expect(twice.err).toContain(
      `incoming/${name}.tar.gz exists already in s3://catalogue: upload under another --name`,
    );
  }, 60_000);

  it('while another publish holds the catalogue: a short wait times out (7); an upload overtaken is superseded (6)', async () => {
    const store = new S3ObjectStore({ client, bucket: BUCKET });
    const lock = await acquirePublishLock(store, '', 's3://catalogue/');
    let released = false;
    try {
      const waiting = fixtureSnapshot();
      waiting.modules[0]!.name = 'Never live: overtaken';
      const timedOut = await upload(writeSnapshotFiles(waiting), '--wait', '2s', '--json');
      expect(timedOut.code).toBe(EXIT.timedOut);
      expect(JSON.parse(timedOut.out)).toMatchObject({ outcome: 'timed_out', exit_code: 7, report: null });

      const before = new Set(await incoming());
      const overtaken = upload(writeSnapshotFiles(waiting), '--wait', '2m');
      // A newer upload (made later, so it sorts after) comes in while both wait for the lock: once this one is in.
      await expect
        .poll(async () => (await incoming()).some((key) => !before.has(key)), {
          timeout: 60_000,
          interval: 100,
        })
        .toBe(true);
      const newer = fixtureSnapshot();
      newer.modules[0]!.name = 'The newer upload';
      await client.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: 'incoming/99999999-newer.tar.gz',
          Body: snapshotArchive(newer),
        }),
      );
      await lock.release();
      released = true;

      const result = await overtaken;
      expect(result.code).toBe(EXIT.superseded);
      expect(result.out).toMatch(
        /^superseded: a newer upload, incoming\/99999999-newer\.tar\.gz, came in before this one went live; that one is published instead/,
      );
    } finally {
      if (!released) await lock.release();
    }
    for (let i = 0; i < 100 && (await moduleName(101)) !== 'The newer upload'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await moduleName(101)).toBe('The newer upload');
  }, 150_000);

  it('Ctrl-C while waiting stops the waiting, not the build: exit 130, saying so and where its outcome will be', async () => {
    const store = new S3ObjectStore({ client, bucket: BUCKET });
    const lock = await acquirePublishLock(store, '', 's3://catalogue/');
    const edit = fixtureSnapshot();
    edit.modules[0]!.name = 'Published after Ctrl-C';
    const listening = process.listenerCount('SIGINT');
    try {
      const waiting = upload(writeSnapshotFiles(edit), '--wait', '2m');
      for (let i = 0; i < 300 && !waiting.printed().includes("waiting for the builder's report"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(waiting.printed()).toContain("waiting for the builder's report");

      process.emit('SIGINT');
      const result = await waiting;

      expect(result.code).toBe(EXIT.interrupted);
      expect(result.out).toMatch(
        /^Ctrl-C: stopped waiting, not the build: incoming\/\S+\.tar\.gz is uploaded and the builder goes on with it \(an upload cannot be called back\); follow it in its report, s3:\/\/catalogue\/reports\/\S+\.json, which says how it ended, from npm start's local S3/,
      );
      expect(process.listenerCount('SIGINT'), 'the command listens no more').toBe(listening);
    } finally {
      await lock.release();
    }
    // The build went on: once the other publish let go, the upload is published.
    expect(await servedName(edit.modules[0]!.id, 'Published after Ctrl-C', 60_000)).toBe(
      'Published after Ctrl-C',
    );
  }, 120_000);

  it('the guide’s CI job step, run as GitHub Actions runs it (bash -e) with the stack’s credentials: a valid edit passes, a snapshot with problems fails the job', async () => {
    // As written, but for the two things a runner supplies: the checkout's dependencies and the bucket (here
    // npm start's local S3, which takes its own credentials only). Last in this block: its upload's name (the
    // second, with no milliseconds) sorts after time-named uploads of the same second.
    const step = guideJobStep()
      .replace('npm ci --omit=dev\n', '')
      .replace(
        /"s3:\/\/\$\{\{ vars\.CATALOGUE_BUCKET \}\}"/,
        `s3://${BUCKET} --endpoint ${started.s3Endpoint}`,
      );
    expect(step).not.toContain('{{');
    const job = async (folder: string, sha: string) => {
      const env = {
        ...process.env,
        GITHUB_SHA: sha,
        AWS_ACCESS_KEY_ID: LOOPBACK_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: LOOPBACK_CREDENTIALS.secretAccessKey,
        AWS_REGION: 'us-east-1',
      };
      const script = step.replace(' ../catalogue ', ` ${folder} `);
      try {
        return { code: 0, ...(await run('bash', ['-e', '-c', script], { cwd: REPO_DIR, env })) };
      } catch (error) {
        return error as { code: number; stdout: string; stderr: string };
      }
    };
    const edited = fixtureSnapshot();
    edited.modules[0]!.name = 'Published by the CI job';

    const passed = await job(writeSnapshotFiles(edited), 'c1'.repeat(20));

    expect(passed.code, passed.stderr).toBe(EXIT.ok);
    expect(passed.stderr).toMatch(
      /^uploaded incoming\/\d{8}T\d{6}Z-c1c1c1c1c1c1\.tar\.gz to s3:\/\/catalogue/m,
    );
    expect(passed.stdout).toMatch(/^published version \S{22} \(was \S{22}\): 204 modules;/);
    expect(await servedName(edited.modules[0]!.id, 'Published by the CI job')).toBe(
      'Published by the CI job',
    );

    const before = await incoming();
    const broken = fixtureSnapshot();
    broken.modules[1]!.hp = 0;
    const failed = await job(writeSnapshotFiles(broken), 'c2'.repeat(20));
    expect(failed.code).toBe(EXIT.invalid);
    expect(failed.stderr).toContain(
      `modules.json: record ${broken.modules[1]!.id}: hp: must be a positive integer`,
    );
    expect(failed.stdout).toBe('snapshot refused: 1 problem; nothing was uploaded\n');
    expect(await incoming()).toEqual(before);
  }, 90_000);
});

describe('upload without a stack to upload to', () => {
  it('no npm start runs on the data directory: exit 3, saying how to start one or name a bucket', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'cat-no-start-'));
    vi.stubEnv('CATALOGUE_LOCAL_DIR', empty);
    try {
      const result = await upload(writeSnapshotFiles(fixtureSnapshot()));
      expect(result.code).toBe(EXIT.publishFailed);
      expect(result.out).toBe(
        `upload failed: no npm start is running on ${empty} (none has recorded one there): start it (npm start) in another shell, or name the stack’s bucket with --out s3://BUCKET\n`,
      );

      // npm start ran there once (it was killed: its record stayed), and is not running now.
      recordLocalStack(empty, {
        pid: 1,
        s3: 'http://127.0.0.1:9',
        bucket: 'catalogue',
        prefix: '',
        dynamodb: 'http://127.0.0.1:9',
        keysTable: 'k',
        countersTable: 'c',
        api: 'http://127.0.0.1:8787/v1',
      });
      const stopped = await upload(writeSnapshotFiles(fixtureSnapshot()));
      expect(stopped.code).toBe(EXIT.publishFailed);
      expect(stopped.out).toBe(
        `upload failed: npm start is not running on ${empty} (its S3 at http://127.0.0.1:9 does not answer): start it (npm start) in another shell, or name the stack’s bucket with --out s3://BUCKET\n`,
      );
    } finally {
      vi.stubEnv('CATALOGUE_LOCAL_DIR', local);
      rmSync(empty, { recursive: true, force: true });
    }
  }, 60_000);

  it.each([
    [
      ['--out', 's3://bucket/catalogue'],
      "--out s3://bucket/catalogue: upload takes the stack's bucket, s3://BUCKET (or its UploadUri, s3://BUCKET/incoming/)",
    ],
    [[], 'upload needs the snapshot folder or .tar.gz: npm run catalogue -- upload my-catalogue'],
    [['--wait', '0'], '--wait 0: the upload waits for its report; give it at least 1s'],
    [['--name', '../x'], '--name ../x: an upload\'s name is letters, digits, ".", "_" and "-"'],
    [['--source', 'x'], '--source does not apply to upload'],
  ])('usage: %j', async (args, message) => {
    const folder = args.length === 0 ? [] : [writeSnapshotFiles(fixtureSnapshot())];
    const result = await upload(...folder, ...args);
    expect(result.code).toBe(EXIT.usage);
    expect(result.err).toContain(message);
  });

  it('a path that is neither a folder nor a .tar.gz is named as such', async () => {
    const result = await upload('no-such-folder');
    expect(result).toMatchObject({ code: EXIT.usage });
    expect(result.err).toContain(
      'no-such-folder: no such directory; upload takes a snapshot folder or a .tar.gz made from one',
    );
  });
});
