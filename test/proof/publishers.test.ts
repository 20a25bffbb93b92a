/**
 * Publishers that race, and publishers that die, as publishers run them: the CLI in child processes. Two
 * publishes into one target — a full rebuild and a one-module edit, both `--retention 0`, started 0–2.5 s
 * apart — leave the pointer on a complete version (every object it needs present and intact), one of the
 * two succeeding and the other refused at once (exit 4, naming the holder) or run after it. A publish
 * SIGKILLed mid-upload leaves what the next ordinary publish collects: its temporary files, the objects it
 * uploaded in vain, its lock (taken over at once on the same machine) and its journal.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { startS3 } from '@catalogue/local-aws';
import { afterAll, describe, expect, it } from 'vitest';
import { s3Client } from '../../aws/sdk.js';
import { EXIT } from '../../builder/cli.js';
import { decodeManifest, manifestKey } from '../../builder/publish/manifest.js';
import { publishCatalogue } from '../../builder/publish/publish.js';
import { renderCatalogue } from '../../builder/render/full.js';
import type { Snapshot } from '../../builder/snapshot/snapshot.js';
import { generateSnapshot, writeSnapshot } from '../../builder/synthetic/generate.js';
import { objectIdFor, POINTER_KEY } from '../../store/layout.js';
import { DirectoryObjectStore } from '../../store/objects/directory.js';
import type { WritableObjectStore } from '../../store/objects/interface.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { parsePointer, parseShard } from '../../store/pointer.js';
import {
  copiedDirectory,
  REPO_DIR,
  removeTemporaryDirectories,
  temporaryDirectory,
} from '../helpers/builder.js';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  removeTemporaryDirectories();
});

/** The CLI in a child process, exactly as a publisher runs it; its exit code and everything it printed. */
function cli(args: string[]): {
  child: ChildProcess;
  done: Promise<{ code: number | null; output: string }>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', 'builder/cli.ts', ...args], {
    cwd: REPO_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const done = once(child, 'exit').then(([code]) => ({ code: code as number | null, output }));
  return { child, done };
}

/** Three snapshots: a base, a full rebuild of it (a third of the modules changed), and a one-module edit. */
async function sources(modules: number, seed: number) {
  const base = generateSnapshot({ modules, seed });
  const full: Snapshot = {
    ...base,
    modules: base.modules.map((m, i) =>
      i % 3 === 0 ? { ...m, description: `${m.description} (revised)` } : m,
    ),
  };
  const edit: Snapshot = {
    ...base,
    modules: base.modules.map((m, i) => (i === 7 ? { ...m, name: `${m.name} II` } : m)),
  };
  const dirs = { full: temporaryDirectory('full'), edit: temporaryDirectory('edit') };
  await writeSnapshot(dirs.full, full);
  await writeSnapshot(dirs.edit, edit);
  const version = (snapshot: Snapshot) => renderCatalogue(snapshot).pointer.version;
  return { base, dirs, versions: new Set([version(full), version(edit)]) };
}

/**
 * Every object the pointer's version needs — its shards, what they name, and what its manifest lists — is
 * in the store and holds the bytes its id names. Returns the version.
 */
async function assertComplete(store: WritableObjectStore, prefix: string): Promise<string> {
  const read = await store.get(`${prefix}${POINTER_KEY}`);
  const pointer = read.ok ? parsePointer(read.body) : undefined;
  expect(pointer, 'an intact pointer').toBeDefined();
  const needed = new Set<string>(pointer!.shards);
  for (const shardId of new Set(pointer!.shards)) {
    const shard = await store.get(`${prefix}o/${shardId}`);
    expect(shard.ok, `shard ${shardId}`).toBe(true);
    for (const entry of Object.values(parseShard(shard.ok ? shard.body : Buffer.alloc(0)) ?? {}))
      needed.add(typeof entry === 'string' ? entry : entry[0]);
  }
  const manifest = await store.get(manifestKey(prefix, pointer!.version));
  const objects = decodeManifest(manifest.ok ? manifest.body : undefined, pointer!.version)?.objects;
  expect(objects, 'the manifest of the current version').toBeDefined();
  for (const id of objects!.keys()) needed.add(id);
  let missing = 0;
  for (const id of needed) {
    const object = await store.get(`${prefix}o/${id}`);
    if (!object.ok || objectIdFor(object.body) !== id) missing++;
  }
  expect(missing, `objects of version ${pointer!.version} missing or damaged`).toBe(0);
  return pointer!.version;
}

/** Run the two racing publishers, the edit `delayMs` after the rebuild, and check what they leave. */
async function race(
  out: string[],
  store: WritableObjectStore,
  prefix: string,
  setup: Awaited<ReturnType<typeof sources>>,
  delayMs: number,
) {
  const full = cli(['build', '--source', setup.dirs.full, ...out, '--retention', '0']);
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  const edit = cli(['build', '--source', setup.dirs.edit, ...out, '--retention', '0']);
  const outcomes = await Promise.all([full.done, edit.done]);
  const codes = outcomes.map(({ code }) => code);
  console.log(`publishers ${delayMs} ms apart: exit codes ${codes.join(', ')}`);
  for (const { code, output } of outcomes) {
    expect([EXIT.ok, EXIT.busy], output).toContain(code);
    if (code === EXIT.busy)
      expect(output).toMatch(/^publish refused: another publish holds the target.*pid \d+/m);
  }
  expect(codes).toContain(EXIT.ok);
  const version = await assertComplete(store, prefix);
  expect(setup.versions.has(version)).toBe(true);
  expect((await store.get(`${prefix}publish.lock`)).ok, 'the lock is released').toBe(false);
  return codes;
}

describe('two publisher processes racing into one target', () => {
  it('a directory (2,000 modules): the pointer only ever names a complete version', async () => {
    const setup = await sources(2_000, 41);
    // The base published once; each race runs on a byte-identical copy of it.
    const published = temporaryDirectory('race-base');
    await publishCatalogue({ store: new DirectoryObjectStore(published), snapshot: setup.base });
    const codes: (number | null)[] = [];
    for (const delayMs of [0, 1_250, 2_500]) {
      const root = copiedDirectory(published, 'race');
      const store = new DirectoryObjectStore(root);
      codes.push(...(await race(['--out', root], store, '', setup, delayMs)));
      expect(readdirSync(join(root, '.tmp-writes'))).toEqual([]);
    }
    // The publishes overlapped: at least one was refused rather than run concurrently.
    expect(codes).toContain(EXIT.busy);
  }, 300_000);

  it('an S3 bucket (s3rver): the same, with conditional writes', async () => {
    const s3 = await startS3('race');
    const client = s3Client({ endpoint: s3.endpoint });
    try {
      const setup = await sources(150, 43);
      const store = new S3ObjectStore({ client, bucket: s3.bucket });
      await publishCatalogue({ store, prefix: 'cat/', snapshot: setup.base });
      await race(['--out', `s3://${s3.bucket}/cat`, '--endpoint', s3.endpoint], store, 'cat/', setup, 1_000);
    } finally {
      client.destroy();
      await s3.dispose();
    }
  }, 300_000);
});

describe('a publish killed mid-upload', () => {
  it('leaves what the next ordinary publish collects: temporary files, orphans, its lock and journal', async () => {
    const root = temporaryDirectory('killed');
    const store = new DirectoryObjectStore(root);
    const setup = await sources(400, 47);
    await publishCatalogue({ store, snapshot: setup.base });
    const objects = () => readdirSync(join(root, 'o'));
    const baseline = objects().length;
    const big = temporaryDirectory('big');
    await writeSnapshot(big, generateSnapshot({ modules: 1_500, seed: 11 }));

    const killed = cli(['build', '--source', big, '--out', root, '--concurrency', '4']);
    const deadline = Date.now() + 120_000;
    while (objects().length < baseline + 300) {
      if (killed.child.exitCode !== null) throw new Error('the publish finished before it could be killed');
      if (Date.now() > deadline) throw new Error('the publish never started uploading');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    killed.child.kill('SIGKILL');
    await killed.done;
    // What a killed writer leaves between writing a temporary file and renaming it (planted, as a kill
    // lands there only by chance), and what this kill left: its lock, its journal, its uploads.
    writeFileSync(
      join(
        root,
        '.tmp-writes',
        `${hostname()
          .replace(/[^A-Za-z0-9-]/g, '')
          .slice(0, 32)}.${killed.child.pid}.999999`,
      ),
      'partial',
    );
    expect(existsSync(join(root, 'publish.lock'))).toBe(true);
    expect(
      readdirSync(join(root, 'versions')).filter((name) => name.startsWith('pending-')).length,
    ).toBeGreaterThan(0);
    const orphans = objects().length - baseline;
    expect(orphans).toBeGreaterThanOrEqual(300);

    const next = cli(['build', '--source', setup.dirs.edit, '--out', root]);
    const { code, output } = await next.done;
    expect(code, output).toBe(EXIT.ok);
    expect(output).toMatch(/took over the publish lock .* its process \(pid \d+\) is gone/);
    expect(output).toMatch(/collected what interrupted publishes left: \d+ temporary files, \d+ objects/);
    const version = await assertComplete(store, '');
    expect(setup.versions.has(version)).toBe(true);
    // Nothing left: no temporary file, lock or journal, and every object belongs to a version still there.
    expect(readdirSync(join(root, '.tmp-writes'))).toEqual([]);
    expect(existsSync(join(root, 'publish.lock'))).toBe(false);
    const versionFiles = readdirSync(join(root, 'versions'));
    expect(versionFiles.filter((name) => name.startsWith('pending-'))).toEqual([]);
    const referenced = new Set<string>();
    for (const name of versionFiles.filter((file) => file.endsWith('.manifest'))) {
      const id = name.slice(0, -'.manifest'.length);
      for (const objectId of decodeManifest(readFileSync(join(root, 'versions', name)), id)!.objects.keys())
        referenced.add(objectId);
    }
    expect(new Set(objects())).toEqual(referenced);
    console.log(`killed publish: ${orphans} objects uploaded in vain, all collected by the next publish`);
  }, 300_000);
});
