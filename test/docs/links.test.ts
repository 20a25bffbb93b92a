/**
 * The manual's relative links resolve: every `[text](target)` in README.md, docs/*.md, bench/README.md,
 * client/README.md and test/README.md that is not an absolute URL names a file or folder of the repository, and
 * its `#anchor` (or a bare `#anchor`) names a heading of the target page, computed the way GitHub makes heading
 * ids.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headingIds, proseLines } from '../helpers/markdown.js';

const ROOT = join(import.meta.dirname, '..', '..');
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  'bench/README.md',
  'client/README.md',
  'test/README.md',
];

/** The relative link targets of a page: `path`, `path#anchor` or `#anchor`. */
function relativeLinks(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(markdown)) {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) targets.push(target);
    }
  }
  return targets;
}

/** What is wrong with `target` as written in `page`, or undefined when it resolves. */
function problemOf(page: string, target: string): string | undefined {
  const [path = '', anchor] = target.split('#', 2);
  const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path));
  if (!existsSync(file)) return `${target}: no such file or folder`;
  if (anchor === undefined) return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md'))
    return `${target}: an anchor into a page that is not markdown`;
  if (!headingIds(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor)))
    return `${target}: no heading #${anchor} in ${relative(ROOT, file)}`;
  return undefined;
}

it('finds the pages', () => {
  expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'bench/README.md']));
});

it('computes heading ids as GitHub does', () => {
  // Prepare
  const markdown = [
    '# Licence and attribution (CC BY 4.0)',
    '## `npm start`',
    "## Publisher's guide",
    '## 1. Bootstrap CDK (once per account and region)',
    '```sh',
    '# not a heading',
    '```',
    '## Tests',
    '## Tests',
  ].join('\n');

  // Act
  const ids = headingIds(markdown);

  // Assess
  expect([...ids]).toEqual([
    'licence-and-attribution-cc-by-40',
    'npm-start',
    'publishers-guide',
    '1-bootstrap-cdk-once-per-account-and-region',
    'tests',
    'tests-1',
  ]);
});

describe.each(PAGES)('%s', (page) => {
  it('has only relative links that resolve, anchors included', () => {
    // Prepare
    const links = relativeLinks(readFileSync(join(ROOT, page), 'utf8'));

    // Act
    const problems = links
      .map((target) => problemOf(page, target))
      .filter((problem) => problem !== undefined);

    // Assess
    expect(links.length).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });
});
