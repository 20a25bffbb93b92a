import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { publishCatalogue } from '../../../builder/publish/publish.js';
import { generateSnapshot, writeSnapshot } from '../../../builder/synthetic/generate.js';
import { objectIdFor } from '../../../store/layout.js';
import { DirectoryObjectStore } from '../../../store/objects/directory.js';
import {
  fixtureSnapshot,
  REPO_DIR,
  removeTemporaryDirectories,
  temporaryDirectory,
  versionOn,
} from '../../helpers/builder.js';

const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  removeTemporaryDirectories();
});

/** The CLI in a child process, exactly as a publisher runs it. */
function cli(args: string[]): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'builder/cli.ts', ...args], {
    cwd: REPO_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return child;
}

const objectFiles = (root: string) => readdirSync(join(root, 'o')).filter((name) => !name.startsWith('.'));

/** Every object the pointer references is present and holds the bytes its id names. */
function assertServable(root: string): { version: string } {
  const version = versionOn(root);
  for (const id of version.objectIds) expect(objectIdFor(readFileSync(join(root, 'o', id))), id).toBe(id);
  return version;
}

it('a publish killed mid-way leaves the previous version fully served, and a re-run completes it', async () => {
  const root = temporaryDirectory('interrupted');
  const previous = await publishCatalogue({
    store: new DirectoryObjectStore(root),
    snapshot: fixtureSnapshot(),
  });
  const pointerBefore = readFileSync(join(root, 'current.json'));
  const baseline = objectFiles(root).length;
  const source = temporaryDirectory('big-snapshot');
  // Big enough that uploading takes seconds: ~6,500 objects, 40 MB.
  await writeSnapshot(source, generateSnapshot({ modules: 1500, seed: 11 }));

  const child = cli(['build', '--source', source, '--out', root, '--concurrency', '4']);
  const exited = once(child, 'exit');
  const deadline = Date.now() + 60_000;
  while (objectFiles(root).length < baseline + 150) {
    if (child.exitCode !== null) throw new Error('the publish finished before it could be interrupted');
    if (Date.now() > deadline) throw new Error('the publish never started uploading');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  child.kill('SIGKILL');
  const [, signal] = await exited;

  expect(signal).toBe('SIGKILL');
  expect(readFileSync(join(root, 'current.json')).equals(pointerBefore)).toBe(true);
  expect(assertServable(root).version).toBe(previous.version);
  const uploadedBeforeKill = objectFiles(root).length - baseline;

  const rerun = cli(['build', '--source', source, '--out', root]);
  let output = '';
  rerun.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const [code] = await once(rerun, 'exit');

  expect(code).toBe(0);
  const match = /^published (\S{22}) to .*: (\d+) objects added \(.*\), (\d+) unchanged, /.exec(output);
  expect(match, output).not.toBeNull();
  expect(Number(match![3])).toBeGreaterThanOrEqual(uploadedBeforeKill);
  expect(assertServable(root).version).toBe(match![1]);
  // The previous version stays readable (retention), so open cursors keep working.
  for (const id of versionOn(root, pointerBefore).objectIds) expect(objectFiles(root)).toContain(id);
}, 120_000);
