/**
 * The quick loop (`npm run test:quick`, vitest.quick.config.ts) is what test/README.md says it is: the number of
 * suites it names is the number vitest.quick.config.ts leaves in, and every suite it leaves out exists (a slow
 * suite renamed would silently rejoin the loop).
 */
import { globSync, readFileSync } from 'node:fs';
import { join, matchesGlob } from 'node:path';
import { describe, expect, it } from 'vitest';
import quick, { SLOW } from '../../vitest.quick.config.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Every suite `npm test` runs (vitest.config.ts include: the product's, the bench's own and the local AWS layer's). */
const suites: string[] = (quick.test?.include ?? []).flatMap((glob: string) =>
  globSync(glob, { cwd: ROOT, exclude: (path: string) => path.includes('node_modules') }),
);
const excluded: string[] = quick.test?.exclude ?? [];
const inLoop = suites.filter((file) => !excluded.some((glob) => matchesGlob(file, glob)));

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
});
