/**
 * The publisher's first publish (docs/publishing.md, "Your first publish"), run as written: every `sh` block
 * of that section, in order, in one bash, in a working directory laid out like the repository root (its
 * `fixtures/`, and `npm run catalogue` / `npm run keys` as the repository's package.json runs them), with the
 * three `export` lines a real `npm start` printed. Then the stack is restarted on the same data directory, as
 * step 9 says, and still serves the edit.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { startNpm, stop } from '../helpers/npm-start.js';

const ROOT = join(import.meta.dirname, '..', '..');
const GUIDE = readFileSync(join(ROOT, 'docs', 'publishing.md'), 'utf8');
const scratch = mkdtempSync(join(tmpdir(), 'cat-guide-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/** As a publisher starts it: the fixture, and no keys but the dev key it prints. */
const NO_SEEDED_KEYS = { CATALOGUE_SOURCE: '', CATALOGUE_DEV_KEYS: '' };

/** The `sh` blocks of the section under `heading`, in order. */
function shellBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

it('runs the first publish as written: copy, edit, validate, dry run, publish, see it, restart', async () => {
  // Prepare: a working directory like the repository root, and a running stack.
  const work = join(scratch, 'work');
  rmSync(work, { recursive: true, force: true });
  await promisify(execFile)('mkdir', ['-p', work]);
  symlinkSync(join(ROOT, 'fixtures'), join(work, 'fixtures'));
  writeFileSync(
    join(work, 'package.json'),
    JSON.stringify({
      private: true,
      scripts: {
        catalogue: `node ${join(ROOT, 'builder', 'launch.mjs')}`,
        keys: `${join(ROOT, 'node_modules', '.bin', 'tsx')} ${join(ROOT, 'proxy', 'admin', 'cli.ts')}`,
      },
    }),
  );
  const blocks = shellBlocks(GUIDE, 'Your first publish: edit, check, publish, see');
  expect(blocks.length, 'the sh blocks of the walk-through').toBeGreaterThanOrEqual(6);
  const local = join(scratch, 'local');
  const first = await startNpm(local, NO_SEEDED_KEYS);
  let output: string;
  try {
    // Act: the blocks, in one bash, with the pasted exports.
    const run = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', blocks.join('\n')], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...first.exports },
    });
    output = run.stdout;
  } finally {
    await stop(first);
  }
  const again = await startNpm(local, NO_SEEDED_KEYS);
  let served: string;
  try {
    const { exports } = again;
    const response = await fetch(`${exports.CATALOGUE_URL}/modules?fields=name&limit=1`, {
      headers: { authorization: `Bearer ${exports.CATALOGUE_KEY}` },
    });
    served = await response.text();
  } finally {
    await stop(again);
  }

  // Assess: each step said what the guide shows, and the edit survived the restart.
  expect(output).toMatch(
    /^my-catalogue: valid \(\d+ modules, \d+ manufacturers, \d+ standards, \d+ tags\)$/m,
  );
  expect(output).toMatch(
    /^dry run for s3:\/\/catalogue\/: version \S+; would add \d+ objects .*nothing written/m,
  );
  expect(output).toMatch(/^published \S+ to s3:\/\/catalogue\/: \d+ objects added/m);
  expect(output).toContain('{"data":[{"id":101,"name":"A-110-1 VCO"}],"page":{"next_cursor":"');
  expect(served).toContain('{"data":[{"id":101,"name":"A-110-1 VCO"}]');
  expect(again.exports.CATALOGUE_KEY).toBe(first.exports.CATALOGUE_KEY);
  expect(again.output()).toMatch(
    /Catalogue: version \S+, published by a publisher over what npm start published/,
  );
}, 240_000);
