/**
 * `npm test` checks the project's own files, never a folder of the user's that sits in the checkout: a copy of the
 * catalogue to edit (a publisher's natural first move, under any name, its JSON broken or not) or a scratch
 * script, at the root or inside one of the project's folders. Biome (biome.json `files.includes`) reads the
 * project's folders, and JSON only where the project keeps it; knip (each workspace's `project` in knip.jsonc) and
 * TypeScript (tsconfig.json `include`) read the project's folders; vitest reads `test/**` and `bench/test/**`, and
 * depcruise the folders it is given. And nothing of the project falls out of those lists: every file Biome can read is checked.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, matchesGlob } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'jsonc-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const BIOME = join(ROOT, 'node_modules/@biomejs/biome/bin/biome');

/**
 * A catalogue copy at the root, a script of the user's beside it, and a catalogue copy inside a project folder (a
 * script there is the project's: TypeScript and Biome read every script in the project's folders).
 */
const ROOT_STRAY = `my-catalogue-copy-${process.pid}`;
const NESTED_STRAY = `docs/my-catalogue-${process.pid}`;
const STRAY_FILES = [
  `${ROOT_STRAY}/modules.json`,
  `${ROOT_STRAY}/tags.json`,
  `${ROOT_STRAY}/notes.ts`,
  `${NESTED_STRAY}/modules.json`,
  `${NESTED_STRAY}/tags.json`,
];
const CONTENT: Record<string, string> = {
  'modules.json': '[{"id": 1, "name": "Half-edited",\n',
  'tags.json': '[ {"id":1,"name":"Oscillator","type":"voice"} ]\n',
  'notes.ts': 'var unused = 1\n',
};

beforeAll(() => {
  for (const file of STRAY_FILES) {
    mkdirSync(join(ROOT, dirname(file)), { recursive: true });
    writeFileSync(join(ROOT, file), CONTENT[basename(file)]!);
  }
});

afterAll(() => {
  for (const folder of [ROOT_STRAY, NESTED_STRAY])
    rmSync(join(ROOT, folder), { recursive: true, force: true });
});

/** Tracked files with one of `extensions`, outside fixtures/ (catalogue data, checked by the builder's validation). */
function tracked(extensions: RegExp): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => extensions.test(file) && !file.startsWith('fixtures/'));
}

describe('a folder of the user’s in the checkout', () => {
  it('is not read by Biome, at the root or inside a project folder, broken JSON and all', async () => {
    const { stdout, stderr } = await run(
      process.execPath,
      [BIOME, 'check', '--no-errors-on-unmatched', ROOT_STRAY, NESTED_STRAY],
      { cwd: ROOT },
    );
    expect(`${stdout}${stderr}`).toContain('Checked 0 files');
  });

  it('is not in knip’s project nor in TypeScript’s, which hold every source file of the project', () => {
    const knip = parse(readFileSync(join(ROOT, 'knip.jsonc'), 'utf8')) as {
      workspaces: Record<string, { project: string[] }>;
    };
    const tsconfig = parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] };
    // Each workspace's project globs, from the repository's root (`!` kept in front).
    const project = Object.entries(knip.workspaces).flatMap(([folder, { project }]) =>
      project.map((glob) => {
        const negated = glob.startsWith('!');
        const path = folder === '.' ? glob.replace(/^!/, '') : `${folder}/${glob.replace(/^!/, '')}`;
        return negated ? `!${path}` : path;
      }),
    );
    const inKnip = (file: string) =>
      project.some((glob) => !glob.startsWith('!') && matchesGlob(file, glob)) &&
      !project.some((glob) => glob.startsWith('!') && matchesGlob(file, glob.slice(1)));
    const inTypeScript = (file: string) => tsconfig.include.some((glob) => matchesGlob(file, glob));

    expect(
      STRAY_FILES.filter((file) => file.endsWith('.ts') && (inKnip(file) || inTypeScript(file))),
    ).toEqual([]);
    const sources = tracked(/\.(ts|mjs)$/).filter((file) => !file.startsWith('test/generators/'));
    expect(sources.filter((file) => !inKnip(file))).toEqual([]);
    expect(
      sources.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !inTypeScript(file)),
    ).toEqual([]);
  });
});

describe('the project’s own files', () => {
  it('are all read by Biome: every tracked script and JSON file but the generated types and lockfiles', async () => {
    const files = tracked(/\.(ts|js|mjs|cjs|json|jsonc)$/).filter(
      (file) => file !== 'client/openapi-types.ts' && !file.endsWith('package-lock.json'),
    );
    const { stdout, stderr } = await run(process.execPath, [BIOME, 'format', ...files], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(`${stdout}${stderr}`).toContain(`Checked ${files.length} files`);
  });
});
