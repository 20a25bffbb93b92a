/**
 * Every reference resolves inside the repository. Over every tracked text file:
 * - a path to a Markdown page (`docs/api.md#paging` in a comment or a page) and a Markdown link (to any file, or
 *   `#paging` in the page itself) name a file of the repository, and an `#anchor` a heading of that page
 *   (GitHub's heading ids). A bare file name without an anchor (`'README.md'` in code) is a name, not a reference;
 * - nothing cites the team's private design or specification (they are not in the repository: what the code
 *   relies on is written in `docs/design.md` and `docs/api.md`);
 * - no merge-conflict marker line is left (`<<<<<<< `, `>>>>>>> `, a lone `=======` that is not a Markdown
 *   setext heading's underline).
 * A failure names file:line. Fixtures are checked for conflict markers only.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headingIds, proseLines } from '../helpers/markdown.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** The repository as the checks see it: what is at a repository path. */
interface Tree {
  kind(path: string): 'file' | 'folder' | undefined;
  read(path: string): string;
}

const SELF = 'test/docs/references.test.ts';

const DISK: Tree = {
  kind(path) {
    const full = join(ROOT, path);
    if (!existsSync(full)) return undefined;
    return statSync(full).isDirectory() ? 'folder' : 'file';
  },
  read: (path) => readFileSync(join(ROOT, path), 'utf8'),
};

/** Made-up references that tests use as sample input (file → the references): not references at all. */
const SAMPLES: Readonly<Record<string, readonly string[]>> = {
  'docs/reference/prose.ts': ['keys.md#x'],
  'test/docs/examples.test.ts': ['docs/x.md'],
  'test/docs/reference/prose.test.ts': ['keys.md#a-section', 'versioning.md#compatibility', 'keys.md#x'],
  'test/docs/references.test.ts': ['docs/api.md#nope', 'docs/gone.md', 'gone.md', 'docs/a.md'],
};

/** Citations of documents that are not in the repository (written so that this file does not match itself). */
const PRIVATE_DOCUMENT = /DESIGN(?:\.md|\s§)|\bspec\s§/;

/** A path ending in `.md`, with an optional anchor, standing on its own in a line. */
const PAGE_PATH = /(?<![\w./-])((?:\.{1,2}\/)*[\w-][\w.-]*(?:\/[\w.-]+)*\.md)(?:#([\w-]+))?(?![\w-])/g;

/** A Markdown link's target: `[text](target)`. */
const LINK = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/** Where `target` (a repository-relative or file-relative path) is, seen from `file`, or undefined. */
function resolve(tree: Tree, file: string, target: string): string | undefined {
  const here = posix.dirname(file);
  if (/^\.{1,2}\//.test(target)) {
    const path = posix.normalize(posix.join(here, target));
    return tree.kind(path) ? path : undefined;
  }
  // A bare name or a path: from the file's folder, then from each folder above it up to the repository's root.
  for (let folder = here; ; folder = posix.dirname(folder)) {
    const path = posix.normalize(posix.join(folder, target));
    if (tree.kind(path)) return path;
    if (folder === '.' || folder === '') return undefined;
  }
}

/** What is wrong with `target` (`path`, `path#anchor` or `#anchor`) as written in `file`, or undefined. */
function targetProblem(tree: Tree, file: string, target: string): string | undefined {
  const [written = '', anchor] = target.split('#', 2);
  const path = written === '' ? file : resolve(tree, file, decodeURIComponent(written));
  if (path === undefined) return `${target}: no such file or folder`;
  if (anchor === undefined) return undefined;
  if (tree.kind(path) !== 'file' || !path.endsWith('.md'))
    return `${target}: an anchor into a page that is not markdown`;
  if (!headingIds(tree.read(path)).has(decodeURIComponent(anchor)))
    return `${target}: no heading #${anchor} in ${path}`;
  return undefined;
}

/** The references of one line: Markdown link targets (pages only) and paths to `.md` pages. */
function lineTargets(line: string, prose: string | undefined): string[] {
  const targets: string[] = [];
  for (const match of (prose ?? '').matchAll(LINK)) {
    if (!/^[a-z][a-z0-9+.-]*:/i.test(match[1]!)) targets.push(match[1]!);
  }
  const withoutLinks = prose === undefined ? line : line.replace(LINK, '');
  for (const match of withoutLinks.matchAll(PAGE_PATH)) {
    if (match[2] !== undefined) targets.push(`${match[1]}#${match[2]}`);
    else if (match[1]!.includes('/')) targets.push(match[1]!);
  }
  return [...new Set(targets)];
}

/** Dead references and citations of private documents in one tracked file, as `file:line: problem`. */
function referenceProblems(tree: Tree, file: string, text: string): string[] {
  const problems: string[] = [];
  const lines = text.split('\n');
  const prose = file.endsWith('.md') ? proseLines(text) : undefined;
  // This file lists every sample (in SAMPLES) and writes its own.
  const samples = file === SELF ? Object.values(SAMPLES).flat() : (SAMPLES[file] ?? []);
  lines.forEach((line, index) => {
    const at = `${file}:${index + 1}`;
    if (PRIVATE_DOCUMENT.test(line)) {
      problems.push(
        `${at}: cites a document that is not in the repository; cite the docs/ page that holds it`,
      );
    }
    for (const target of lineTargets(line, prose?.[index])) {
      if (samples.includes(target)) continue;
      const problem = targetProblem(tree, file, target);
      if (problem !== undefined) problems.push(`${at}: ${problem}`);
    }
  });
  return problems;
}

/** Merge-conflict marker lines left in a file, as `file:line: problem`. */
function conflictMarkers(file: string, text: string): string[] {
  const problems: string[] = [];
  const lines = text.split('\n');
  let open = false;
  lines.forEach((line, index) => {
    const marker = /^(<{7}|>{7})(?: |$)/.exec(line)?.[1];
    if (marker !== undefined) open = marker.startsWith('<');
    // A setext heading's underline: under a line of text, above a blank line, in a page, outside a conflict.
    const setext =
      file.endsWith('.md') &&
      !open &&
      (lines[index - 1]?.trim() ?? '') !== '' &&
      (lines[index + 1]?.trim() ?? '') === '';
    if (marker !== undefined || (/^={7}$/.test(line) && !setext)) {
      problems.push(`${file}:${index + 1}: a merge-conflict marker: ${line.slice(0, 7)}`);
    }
  });
  return problems;
}

/** A tree held in memory, for the checks' own tests. */
function memoryTree(files: Record<string, string>): Tree {
  return {
    kind(path) {
      if (path in files) return 'file';
      return Object.keys(files).some((name) => name.startsWith(`${path}/`) || path === '.')
        ? 'folder'
        : undefined;
    },
    read: (path) => files[path]!,
  };
}

describe('the checks', () => {
  const API = '# API reference\n\n## Paging\n\nSee [errors](#errors).\n\n## Errors\n';
  const tree = memoryTree({ 'docs/api.md': API, 'README.md': '# Map\n', 'proxy/http/errors.ts': '' });

  it('accept references that resolve: from the root, from the file, upwards, anchors to headings', () => {
    // Prepare
    const code = [
      '/** The envelope of docs/api.md#errors; paging: docs/api.md#paging. */',
      "const page = 'README.md'; // the root's, found upwards",
      '// RFC 9110 §15.5 and the design page are fine; so is `.md-table` or `**/*.md`.',
    ].join('\n');
    const page = '# Map\n\n[paging](docs/api.md#paging), [code](proxy/http/errors.ts), [here](#map)\n';

    // Act
    const problems = [
      ...referenceProblems(tree, 'proxy/http/errors.ts', code),
      ...referenceProblems(tree, 'README.md', page),
      ...referenceProblems(tree, 'docs/api.md', API),
    ];

    // Assess
    expect(problems).toEqual([]);
  });

  it('name file:line for a missing page, a missing anchor, in a comment and in a link', () => {
    // Prepare
    const code = '// ok\n// see docs/api.md#nope\n// and docs/gone.md\n';
    const page = '# Map\n\n[x](docs/api.md#nope) and [y](gone.md) and [z](#nowhere)\n';

    // Act
    const problems = [
      ...referenceProblems(tree, 'proxy/x.ts', code),
      ...referenceProblems(tree, 'README.md', page),
    ];

    // Assess
    expect(problems).toEqual([
      'proxy/x.ts:2: docs/api.md#nope: no heading #nope in docs/api.md',
      'proxy/x.ts:3: docs/gone.md: no such file or folder',
      'README.md:3: docs/api.md#nope: no heading #nope in docs/api.md',
      'README.md:3: gone.md: no such file or folder',
      'README.md:3: #nowhere: no heading #nowhere in README.md',
    ]);
  });

  it("refuse citations of the team's private design and specification", () => {
    // Prepare
    const cited = ['DESIGN', '.md invariant 3'].join('');
    const section = ['DESIGN', ' §2'].join('');
    const spec = ['spec', ' §7'].join('');
    const code = `// ${cited}\n// ${section}\n// ${spec}\n// RFC 9110 §15.5\n`;

    // Act
    const problems = referenceProblems(tree, 'proxy/x.ts', code);

    // Assess
    const cites = 'cites a document that is not in the repository; cite the docs/ page that holds it';
    expect(problems).toEqual([`proxy/x.ts:1: ${cites}`, `proxy/x.ts:2: ${cites}`, `proxy/x.ts:3: ${cites}`]);
  });

  it('find merge-conflict markers, but not a setext heading', () => {
    // Prepare
    const marked = ['<'.repeat(7), ' HEAD', '\na\n', '='.repeat(7), '\nb\n', '>'.repeat(7), ' main\n'].join(
      '',
    );
    const setext = `Title\n${'='.repeat(7)}\n\ntext\n`;
    const lone = `const a = 1;\n${'='.repeat(7)}\n`;

    // Act
    const problems = [
      ...conflictMarkers('README.md', marked),
      ...conflictMarkers('docs/a.md', setext),
      ...conflictMarkers('proxy/a.ts', lone),
    ];

    // Assess
    expect(problems).toEqual([
      'README.md:1: a merge-conflict marker: <<<<<<<',
      'README.md:3: a merge-conflict marker: =======',
      'README.md:5: a merge-conflict marker: >>>>>>>',
      'proxy/a.ts:2: a merge-conflict marker: =======',
    ]);
  });
});

describe('the repository', () => {
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '' && DISK.kind(file) === 'file');
  const texts = tracked
    .map((file) => ({ file, text: DISK.read(file) }))
    .filter(({ text }) => !text.includes('\0'));

  it('has every reference resolving, and cites no private document', () => {
    // Prepare
    const checked = texts.filter(({ file }) => !file.startsWith('fixtures/'));

    // Act
    const problems = checked.flatMap(({ file, text }) => referenceProblems(DISK, file, text));

    // Assess
    expect(checked.map(({ file }) => file)).toEqual(expect.arrayContaining(['README.md', 'docs/design.md']));
    expect(problems).toEqual([]);
  });

  it('has no merge-conflict marker left in any text file', () => {
    // Act
    const problems = texts.flatMap(({ file, text }) => conflictMarkers(file, text));

    // Assess
    expect(texts.length).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  });
});
