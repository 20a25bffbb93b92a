/**
 * The quick loop (`npm run test:quick`, vitest.config.ts's project `quick`) is what test/README.md says it is: the
 * number of suites it names is the number the project leaves in, every suite it leaves out exists (a slow suite
 * renamed would silently rejoin the loop), and the two projects together run every suite once.
 */
import { globSync, readFileSync } from 'node:fs';
import { join, matchesGlob } from 'node:path';
import { describe, expect, it } from 'vitest';
import config, { SLOW } from '../../vitest.config.js';

const ROOT = join(import.meta.dirname, '..', '..');

type Project = { test: { name: string; include: string[]; exclude?: string[] } };
const projects = (config.test?.projects ?? []) as Project[];
const project = (name: string) => projects.find((candidate) => candidate.test.name === name)!.test;
const matching = (globs: string[]) =>
  globs.flatMap((glob) =>
    globSync(glob, { cwd: ROOT, exclude: (path: string) => path.includes('node_modules') }),
  );

/** Every suite `npm test` runs: the product's, the bench's own and the local AWS layer's. */
const suites: string[] = matching(project('quick').include);
const excluded: string[] = project('quick').exclude ?? [];
const inLoop = suites.filter((file) => !excluded.some((glob) => matchesGlob(file, glob)));
const slow = matching(project('slow').include);

describe('the quick loop', () => {
  it('runs as many suites as test/README.md says', () => {
    const readme = readFileSync(join(ROOT, 'test/README.md'), 'utf8');
    const stated = /it takes (\d+) s \((\d+) files\b/.exec(readme);

    expect(stated, 'test/README.md, "The quick loop": "it takes N s (M files"').not.toBeNull();
    expect(Number(stated![1])).toBeLessThan(60);
    expect(inLoop.length).toBe(Number(stated![2]));
    expect(inLoop.length).toBeLessThan(suites.length);
  });

  it('leaves out only suites that exist', () => {
    expect(SLOW.filter((glob) => !suites.some((file) => matchesGlob(file, glob)))).toEqual([]);
  });

  it('and the slow project runs exactly what it leaves out: every suite once', () => {
    expect([...inLoop, ...slow].sort()).toEqual([...suites].sort());
  });
});
