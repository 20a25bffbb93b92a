/**
 * `npm run catalogue -- versions | rollback | unlock` (builder/target-commands.ts) on a directory target, as a
 * publisher runs them: what is listed, a rollback in seconds that rebuilds nothing and is refused for a
 * version whose objects are gone, and the guard of unlock.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { EXIT, main } from '../../builder/cli.js';
import { LOCK_KEY } from '../../builder/publish/lock.js';
import { POINTER_KEY } from '../../store/layout.js';
import { parsePointer } from '../../store/pointer.js';
import {
  fingerprint,
  fixtureSnapshot,
  removeTemporaryDirectories,
  smallSnapshot,
  temporaryDirectory,
  writeSnapshotFiles,
} from '../helpers/builder.js';

afterAll(removeTemporaryDirectories);
afterEach(() => vi.restoreAllMocks());

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
  try {
    return { code: await main(argv), stdout, stderr };
  } finally {
    vi.restoreAllMocks();
  }
}

const live = (target: string) => parsePointer(readFileSync(join(target, POINTER_KEY)))!.version;

/** A target with two versions published by the CLI: the first, then one module renamed. */
async function twoVersions(): Promise<{ target: string; first: string; second: string }> {
  const target = temporaryDirectory('versions');
  const snapshot = smallSnapshot(20);
  expect((await run(['publish', '--source', writeSnapshotFiles(snapshot), '--out', target])).code).toBe(
    EXIT.ok,
  );
  const first = live(target);
  snapshot.modules[3]!.name = 'Renamed';
  expect((await run(['build', '--source', writeSnapshotFiles(snapshot), '--out', target])).code).toBe(
    EXIT.ok,
  );
  return { target, first, second: live(target) };
}

describe('versions', () => {
  it('lists the retained versions newest first, the live one marked, with who, how, what from and counts', async () => {
    const { target, first, second } = await twoVersions();

    const { code, stdout } = await run(['versions', '--out', target]);

    expect(code).toBe(EXIT.ok);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe(`${target}: 2 retained versions, newest first; * is live`);
    expect(lines[1]).toMatch(
      new RegExp(
        `^\\* ${second}  live since \\S+ \\S+Z  by \\S+@\\S+ \\(cli\\)  snapshot [0-9a-f]{12}  20 modules, [\\d,]+ objects$`,
      ),
    );
    expect(lines[2]).toMatch(
      new RegExp(
        `^  ${first}  live \\S+ \\S+Z – \\S+ \\S+Z  by \\S+@\\S+ \\(cli\\)  snapshot [0-9a-f]{12}  20 modules`,
      ),
    );
    const json = JSON.parse((await run(['versions', '--out', target, '--json'])).stdout);
    expect(json.live).toBe(second);
    expect(json.versions.map((v: { version: string }) => v.version)).toEqual([second, first]);
    expect(json.versions[0].published).toMatchObject({ via: 'cli', counts: { modules: 20 } });
  });

  it('says when nothing is published', async () => {
    const target = temporaryDirectory('empty');
    expect((await run(['versions', '--out', target])).stdout).toBe(`${target}: nothing is published here\n`);
  });
});

describe('rollback', () => {
  it('makes the previous version live again, rebuilding nothing; rolling back again returns', async () => {
    const { target, first, second } = await twoVersions();
    const objects = () => Object.keys(fingerprint(join(target, 'o'))).sort();
    const before = objects();

    const back = await run(['rollback', '--out', target]);

    expect(back.code).toBe(EXIT.ok);
    expect(back.stdout).toMatch(
      new RegExp(
        `^rolled back ${target} to ${first} \\(published .+ by .+ \\(cli\\) from snapshot [0-9a-f]{12}\\); ${second} was live`,
      ),
    );
    expect(live(target)).toBe(first);
    expect(objects()).toEqual(before); // nothing uploaded, nothing collected
    const listed = (await run(['versions', '--out', target])).stdout;
    expect(listed).toContain(`* ${first}`);
    expect(listed).toMatch(/made live again by \S+ at \S+ \S+Z \(rollback\)/);

    expect((await run(['rollback', '--out', target, '--to', second])).code).toBe(EXIT.ok);
    expect(live(target)).toBe(second);
    expect((await run(['rollback', '--out', target, '--to', second])).stdout).toMatch(/is live already/);
  });

  it('refuses a version that is not retained, or whose objects are gone, writing nothing', async () => {
    const { target, first, second } = await twoVersions();
    const unknown = await run(['rollback', '--out', target, '--to', 'AAAAAAAAAAAAAAAAAAAAAA']);
    expect(unknown.code).toBe(EXIT.refused);
    expect(unknown.stderr).toMatch(/^rollback refused: version AAAAAAAAAAAAAAAAAAAAAA is not retained here/);

    // Remove an object only the first version references.
    const manifests = await import('../../builder/publish/manifest.js');
    const manifestOf = (version: string) =>
      manifests.decodeManifest(readFileSync(join(target, 'versions', `${version}.manifest`)), version)!;
    const secondObjects = manifestOf(second).objects;
    const gone = [...manifestOf(first).objects.keys()].find((id) => !secondObjects.has(id))!;
    rmSync(join(target, 'o', gone));
    const state = fingerprint(target);

    const refused = await run(['rollback', '--out', target]);

    expect(refused.code).toBe(EXIT.refused);
    expect(refused.stderr).toContain(`rollback refused: version ${first} cannot be made live: 1 of the `);
    expect(refused.stderr).toContain(`are missing (e.g. o/${gone}); its objects are gone`);
    expect(fingerprint(target)).toEqual(state);
    expect(live(target)).toBe(second);
  });

  it('refuses with nothing to roll back to, and while another publish holds the target', async () => {
    const target = temporaryDirectory('one');
    await run(['publish', '--source', writeSnapshotFiles(fixtureSnapshot()), '--out', target]);
    const none = await run(['rollback', '--out', target]);
    expect(none.code).toBe(EXIT.refused);
    expect(none.stderr).toMatch(
      /^rollback refused: no version before \S+ is retained: there is nothing to roll back to/,
    );

    const { target: busy } = await twoVersions();
    writeFileSync(
      join(busy, LOCK_KEY),
      JSON.stringify({
        owner: 'x',
        host: 'ci',
        machine: 'ci/boot',
        pid: 1,
        process: 'p',
        started_at: new Date().toISOString(),
        renewed_at: new Date().toISOString(),
        expires_at: new Date(Date.now() + 60_000).toISOString(),
      }),
    );
    const refused = await run(['rollback', '--out', busy]);
    expect(refused.code).toBe(EXIT.busy);
    expect(refused.stderr).toMatch(/^rollback refused: another publish holds the target: ci pid 1/);
  });
});

describe('unlock', () => {
  const lockAt = (target: string, fields: Record<string, unknown>) =>
    writeFileSync(
      join(target, LOCK_KEY),
      JSON.stringify({
        owner: 'x',
        host: 'ci',
        machine: 'ci/boot',
        pid: 1,
        process: 'p',
        started_at: '2026-01-01T00:00:00.000Z',
        renewed_at: new Date().toISOString(),
        expires_at: new Date(Date.now() + 60_000).toISOString(),
        ...fields,
      }),
    );

  it('breaks a lock whose lease runs to 2099, after which publishing works again', async () => {
    const target = temporaryDirectory('unlock');
    const source = writeSnapshotFiles(smallSnapshot(20));
    lockAt(target, { expires_at: '2099-01-01T00:01:00.000Z' });
    const blocked = await run(['publish', '--source', source, '--out', target]);
    expect(blocked.code).toBe(EXIT.busy);
    expect(blocked.stderr).toContain(
      `its lease runs to 2099-01-01T00:01:00.000Z, further ahead than any publish sets it`,
    );
    expect(blocked.stderr).toContain(`\`npm run catalogue -- unlock --out ${target}\` clears it`);

    const unlocked = await run(['unlock', '--out', target]);

    expect(unlocked.code).toBe(EXIT.ok);
    expect(unlocked.stdout).toMatch(
      /publish\.lock: broken — its lease runs to 2099-01-01T00:01:00\.000Z, .+; the next publish takes it over at once\n$/,
    );
    expect((await run(['publish', '--source', source, '--out', target])).code).toBe(EXIT.ok);
    expect((await run(['unlock', '--out', target])).stdout).toMatch(/no publish lock; nothing to do/);
  });

  it('refuses a lock that looks live unless forced; removes an empty directory standing where the lock belongs', async () => {
    const target = temporaryDirectory('unlock-live');
    lockAt(target, {});

    const refused = await run(['unlock', '--out', target]);
    expect(refused.code).toBe(EXIT.busy);
    expect(refused.stderr).toMatch(
      /^unlock refused: the publish lock of .+ looks live: ci pid 1, started 2026-01-01T00:00:00\.000Z/,
    );
    expect(refused.stderr).toContain('run unlock again with --force');
    expect(readFileSync(join(target, LOCK_KEY), 'utf8')).toContain('"host":"ci"');

    const forced = await run(['unlock', '--out', target, '--force']);
    expect(forced.code).toBe(EXIT.ok);
    expect(forced.stdout).toMatch(/broken — --force: it looked live/);

    rmSync(join(target, LOCK_KEY));
    mkdirSync(join(target, LOCK_KEY));
    const blocked = await run([
      'publish',
      '--source',
      writeSnapshotFiles(smallSnapshot(20)),
      '--out',
      target,
    ]);
    expect(blocked.code).toBe(EXIT.busy);
    expect(blocked.stderr).toContain('unlock --out');
    const removed = await run(['unlock', '--out', target]);
    expect(removed.code).toBe(EXIT.ok);
    expect(removed.stdout).toMatch(/removed a directory standing where the publish lock belongs/);
  });
});
