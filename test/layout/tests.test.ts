/**
 * Every source file's tests can be found: each has a test at its mirrored path (`test/<path>.test.ts`, or an
 * aspect `test/<path>.<aspect>.test.ts`; in a workspace package, `packages/<name>/src/<path>.ts` is tested at
 * `packages/<name>/test/<path>.test.ts`) or an entry in test/README.md's "where the rest is tested" naming the
 * suites that test it (or "types only" for a file that declares nothing that runs). An entry must name tests
 * that exist, a source file that exists and has no mirrored test, and "types only" only for types.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const RECORD_FILE = 'test/README.md';
const RECORD_HEADING = '## Where the rest is tested';
const TYPES_ONLY = 'types only';

/** The product's folders whose files are held to the rule. */
const SOURCE =
  /^(aws|store|builder|proxy|admin|tables|ops|local|infra|client|packages\/[^/]+\/src)\/.*\.(ts|js|mjs)$/;
/** The suites: the product's, and each workspace package's own. */
const TEST = /^(test|packages\/[^/]+\/test)\/.*\.test\.(ts|mjs)$/;
/** Not product code: declarations, generated types, tools' configuration files. */
const NOT_SOURCE = /\.d\.ts$|^client\/openapi-types\.ts$|\.config\.ts$/;

/** What the record says of one source file: the tests that test it, or that it is types only. */
type Entry = { tests: string[] } | { typesOnly: true };

/** What the checks need to know of the repository. */
interface Repository {
  sources: readonly string[];
  tests: ReadonlySet<string>;
  record: ReadonlyMap<string, Entry>;
  /** Whether a source file declares something that runs (a function, class, constant…). */
  runs(source: string): boolean;
}

/**
 * The record's entries: the rows `| \`source\` | \`test\`, \`test\` |` (or `| … | types only |`) of the section.
 * @example parseRecord('## Where the rest is tested\n\n| `a.ts` | `test/b.test.ts` |') // → Map { 'a.ts' → { tests: ['test/b.test.ts'] } }
 */
function parseRecord(markdown: string): Map<string, Entry> {
  const record = new Map<string, Entry>();
  const section = markdown.split(RECORD_HEADING)[1]?.split(/\n## /)[0] ?? '';
  for (const row of section.matchAll(/^\| `([^`]+)` \| (.+) \|$/gm)) {
    const cell = row[2]!.trim();
    record.set(
      row[1]!,
      cell === TYPES_ONLY
        ? { typesOnly: true }
        : { tests: [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!) },
    );
  }
  return record;
}

/** Where `source`'s mirrored test would be, without its `.test.ts`: `test/<path>`, or a package's `test/<path>`. */
function mirroredBase(source: string): string {
  const bare = source.replace(/\.(ts|js|mjs)$/, '');
  const inPackage = /^(packages\/[^/]+)\/src\/(.+)$/.exec(bare);
  return inPackage ? `${inPackage[1]}/test/${inPackage[2]}` : `test/${bare}`;
}

/** The mirrored tests of `source` among `tests`: `test/<path>.test.*` and `test/<path>.<aspect>.test.*`. */
function mirroredTests(source: string, tests: ReadonlySet<string>): string[] {
  const base = `${mirroredBase(source)}.`;
  return [...tests].filter(
    (test) => test.startsWith(base) && /^([\w-]+\.)?test\.(ts|mjs)$/.test(test.slice(base.length)),
  );
}

/** Every way the repository breaks the rule, one line each. */
function findabilityProblems(repo: Repository): string[] {
  const problems: string[] = [];
  for (const source of repo.sources) {
    const mirrored = mirroredTests(source, repo.tests).length > 0;
    const entry = repo.record.get(source);
    if (!mirrored && entry === undefined)
      problems.push(`${source}: no ${mirroredBase(source)}.test.ts and no entry in ${RECORD_FILE}`);
    if (mirrored && entry !== undefined)
      problems.push(`${source}: has its mirrored test; remove its entry from ${RECORD_FILE}`);
  }
  for (const [source, entry] of repo.record) {
    if (!repo.sources.includes(source)) problems.push(`${RECORD_FILE}: ${source} is not a source file`);
    else if ('typesOnly' in entry && repo.runs(source))
      problems.push(`${RECORD_FILE}: ${source} is not types only: it declares something that runs`);
    if ('tests' in entry && entry.tests.length === 0)
      problems.push(`${RECORD_FILE}: ${source} names no test`);
    for (const test of 'tests' in entry ? entry.tests : []) {
      if (!repo.tests.has(test)) problems.push(`${RECORD_FILE}: ${source}: ${test} does not exist`);
    }
  }
  return problems;
}

describe('the checks', () => {
  const repo = (record: Record<string, Entry>, runs = false): Repository => ({
    sources: ['proxy/a.ts', 'proxy/b.ts', 'proxy/types.ts', 'packages/kit/src/c.ts'],
    tests: new Set(['test/proxy/a.faults.test.ts', 'test/proxy/app.test.ts', 'packages/kit/test/c.test.ts']),
    record: new Map(Object.entries(record)),
    runs: () => runs,
  });

  it('accept a mirrored test (an aspect too), an entry naming existing tests, and types only', () => {
    const problems = findabilityProblems(
      repo({ 'proxy/b.ts': { tests: ['test/proxy/app.test.ts'] }, 'proxy/types.ts': { typesOnly: true } }),
    );
    expect(problems).toEqual([]);
  });

  it('refuse a file with neither, an entry naming a missing test, a stale entry, a false "types only"', () => {
    const problems = findabilityProblems(
      repo(
        {
          'proxy/a.ts': { tests: ['test/proxy/app.test.ts'] },
          'proxy/b.ts': { tests: ['test/proxy/gone.test.ts'] },
          'proxy/types.ts': { typesOnly: true },
          'proxy/moved.ts': { tests: ['test/proxy/app.test.ts'] },
        },
        true,
      ),
    );
    expect(problems).toEqual([
      `proxy/a.ts: has its mirrored test; remove its entry from ${RECORD_FILE}`,
      `${RECORD_FILE}: proxy/b.ts: test/proxy/gone.test.ts does not exist`,
      `${RECORD_FILE}: proxy/types.ts is not types only: it declares something that runs`,
      `${RECORD_FILE}: proxy/moved.ts is not a source file`,
    ]);
    expect(findabilityProblems(repo({}))).toEqual([
      `proxy/b.ts: no test/proxy/b.test.ts and no entry in ${RECORD_FILE}`,
      `proxy/types.ts: no test/proxy/types.test.ts and no entry in ${RECORD_FILE}`,
    ]);
    // A package's source is tested in its own test/, never at the product's mirrored path.
    expect(
      findabilityProblems({
        ...repo({}),
        sources: ['packages/kit/src/d.ts'],
        tests: new Set(['test/packages/kit/src/d.test.ts']),
      }),
    ).toEqual([`packages/kit/src/d.ts: no packages/kit/test/d.test.ts and no entry in ${RECORD_FILE}`]);
  });

  it("read the record's rows, and only its section", () => {
    const markdown = [
      '## Folders',
      '| `test/aws/` | endpoints | seconds |',
      RECORD_HEADING,
      '| Source file | Tested in |',
      '|---|---|',
      '| `a.ts` | `test/b.test.ts`, `test/c.test.ts` |',
      '| `t.ts` | types only |',
      '## After',
      '| `z.ts` | `test/z.test.ts` |',
    ].join('\n');
    expect(parseRecord(markdown)).toEqual(
      new Map<string, Entry>([
        ['a.ts', { tests: ['test/b.test.ts', 'test/c.test.ts'] }],
        ['t.ts', { typesOnly: true }],
      ]),
    );
  });
});

describe('the repository', () => {
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '' && existsSync(join(ROOT, file)));
  const sources = tracked.filter((file) => SOURCE.test(file) && !NOT_SOURCE.test(file));
  const repository: Repository = {
    sources,
    tests: new Set(tracked.filter((file) => TEST.test(file))),
    record: parseRecord(readFileSync(join(ROOT, RECORD_FILE), 'utf8')),
    runs: (source) =>
      /^export (default|(async )?function|const|let|var|class|enum|abstract class)\b/m.test(
        readFileSync(join(ROOT, source), 'utf8'),
      ),
  };

  it('has every source file tested at its mirrored path or recorded in test/README.md', () => {
    expect(sources.length).toBeGreaterThan(100);
    expect(repository.record.size).toBeGreaterThan(0);
    expect(findabilityProblems(repository)).toEqual([]);
  });
});
