/**
 * The publisher's first publish (docs/publishing.md, "Your first publish"), run as written: every `sh` block
 * of that section, in order, in one bash, in a working directory laid out like the repository root (its
 * `fixtures/`, and `npm run catalogue` / `npm run keys` as the repository's package.json runs them), with the
 * three `export` lines a real `npm start` printed. Every `console` block of the section is what the step before
 * it printed (ports and durations aside; `…` leaves out what varies), and every transcript of `npm start` in the
 * manual (this guide's, the README's) is lines of what it printed: the version ids, counts, sizes and cursors
 * they show are the product's (test/docs/examples.test.ts leaves them to this test). `npm run docs:examples`
 * rewrites a stale one. Then the stack is restarted on the same data directory, as step 9 says, and still
 * serves the edit.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import {
  type CodeBlock,
  codeBlocks,
  HOW_TO_UPDATE,
  MANUAL_PAGES,
  readPage,
  rewriteLines,
  sectionAt,
  UPDATING,
} from '../helpers/manual.js';
import { startNpm, stop } from '../helpers/npm-start.js';
import { linesAppearInOrder, linesShow, parseShown, rewriteShown, varying } from '../helpers/shown.js';

const ROOT = join(import.meta.dirname, '..', '..');
const GUIDE = readFileSync(join(ROOT, 'docs', 'publishing.md'), 'utf8');
const scratch = mkdtempSync(join(tmpdir(), 'cat-guide-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/** As a publisher starts it: the fixture, and no keys but the dev key it prints. */
const NO_SEEDED_KEYS = { CATALOGUE_SOURCE: '', CATALOGUE_DEV_KEYS: '' };

const SECTION = 'Your first publish: edit, check, publish, see';
const GUIDE_FILE = 'docs/publishing.md';

/** The `sh` and `console` blocks of the section under `heading`, in order. */
function sectionBlocks(markdown: string, heading: string): CodeBlock[] {
  return codeBlocks(markdown).filter(
    (block) => ['sh', 'console'].includes(block.info) && sectionAt(markdown, block.line) === heading,
  );
}

/** A transcript of npm start in the manual: a block that shows its command or its ready line. */
const isStartTranscript = (block: CodeBlock) =>
  /^(\$ npm start$|Catalogue Read API ready at )/.test(block.lines[0] ?? '');

interface Mismatch {
  file: string;
  /** 1-based line of the block's first content line. */
  line: number;
  shown: string[];
  printed: string[];
  /** The block's lines made current, when they can be. */
  current?: string[];
}

/**
 * A console block made current: each line that no longer matches becomes the printed line at its place (a
 * JSON line keeps its left-outs); a transcript's lines, the printed line that starts most like it.
 */
function currentLines(shown: readonly string[], printed: readonly string[], transcript: boolean): string[] {
  return shown.map((line, index) => {
    if (line.trim() === '…' || line.startsWith('$ ')) return line;
    const matches = (candidate: string) => linesShow([varying(line)], [candidate]);
    if (transcript ? printed.some(matches) : matches(printed[index] ?? '')) return line;
    const common = (a: string, b: string) => {
      let n = 0;
      while (n < a.length && a[n] === b[n]) n++;
      return n;
    };
    const replacement = transcript
      ? [...printed].sort((a, b) => common(b, line) - common(a, line))[0]
      : printed[index];
    if (replacement === undefined) return line;
    try {
      return rewriteShown(parseShown(line), JSON.parse(replacement));
    } catch {
      // Keys stay elided, and the manual's port (8787, or the one it shows) stays.
      const port = /127\.0\.0\.1:(\d+)/.exec(line)?.[1];
      return replacement
        .replace(/pk_live_[A-Za-z0-9_-]{22}/g, 'pk_live_…')
        .replace(/127\.0\.0\.1:\d+/g, port ? `127.0.0.1:${port}` : '$&');
    }
  });
}

function describeMismatches(mismatches: readonly Mismatch[]): string {
  return mismatches
    .map(
      (m) =>
        `${m.file}:${m.line}: the console block no longer shows what was printed (${HOW_TO_UPDATE})\n  shown:\n    ${m.shown.join('\n    ')}\n  printed:\n    ${m.printed.join('\n    ')}`,
    )
    .join('\n');
}

/** Rewrites the blocks that can be (UPDATE_DOCS=1), and answers the mismatches left. */
function settle(mismatches: Mismatch[]): Mismatch[] {
  if (!UPDATING) return mismatches;
  for (const m of mismatches) {
    if (m.current) rewriteLines(m.file, new Map(m.current.map((text, i) => [m.line + i, text])));
  }
  return mismatches.filter((m) => !m.current);
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
  const section = sectionBlocks(GUIDE, SECTION);
  const blocks = section.filter((block) => block.info === 'sh');
  expect(blocks.length, 'the sh blocks of the walk-through').toBeGreaterThanOrEqual(6);
  const local = join(scratch, 'local');
  const first = await startNpm(local, NO_SEEDED_KEYS);
  let output: string;
  try {
    // Act: the blocks, in one bash, with the pasted exports; a marker line before each block's output.
    const script = blocks.map((block, i) => `echo '@@block ${i}@@'\n${block.lines.join('\n')}`).join('\n');
    const run = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...first.exports },
    });
    output = run.stdout;
  } finally {
    await stop(first);
  }
  // Restarted as the ready screen suggests for more requests: with a partner-tier key of its own making.
  const hint = /^ {2}CATALOGUE_DEV_KEYS=(partner:pk_live_[A-Za-z0-9_-]{22}) npm start$/m.exec(first.output());
  expect(hint, "the ready screen's partner-key line").not.toBeNull();
  const again = await startNpm(local, { ...NO_SEEDED_KEYS, CATALOGUE_DEV_KEYS: hint![1]! });
  let served: string;
  let partnerLimit: string | null;
  try {
    const { exports } = again;
    const response = await fetch(`${exports.CATALOGUE_URL}/modules?fields=name&limit=1`, {
      headers: { authorization: `Bearer ${exports.CATALOGUE_KEY}` },
    });
    served = await response.text();
    const partner = await fetch(`${exports.CATALOGUE_URL}/tags?limit=1`, {
      headers: { authorization: `Bearer ${hint![1]!.slice('partner:'.length)}` },
    });
    partnerLimit = partner.headers.get('x-ratelimit-limit-minute');
  } finally {
    await stop(again);
  }
  expect(partnerLimit).toBe('600');

  // Assess: each console block shows what its step printed; npm start's transcripts show lines it printed.
  const printedBy = output.split(/^@@block (\d+)@@\n/m);
  const stepOutput = (block: CodeBlock) => {
    const index = blocks.indexOf(block);
    return (printedBy[printedBy.indexOf(String(index)) + 1] ?? '').trimEnd().split('\n');
  };
  const mismatches: Mismatch[] = [];
  section.forEach((block, i) => {
    if (block.info !== 'console' || isStartTranscript(block)) return;
    const before = section
      .slice(0, i)
      .reverse()
      .find((candidate) => candidate.info === 'sh');
    if (!before) throw new Error(`${GUIDE_FILE}:${block.line}: a console block with no sh block before it`);
    // Without npm's own header lines (`> catalogue`, `> node …`), which a reader's terminal shows as well.
    const printed = stepOutput(before).filter((line) => line !== '' && !line.startsWith('> '));
    if (!linesShow(block.lines.map(varying), printed)) {
      mismatches.push({
        file: GUIDE_FILE,
        line: block.line,
        shown: block.lines,
        printed,
        current: currentLines(block.lines, printed, false),
      });
    }
  });
  // As a user sees it at the repository's root, where the data directory is .local.
  const started = first.output().replaceAll(local, '.local').split('\n');
  let transcripts = 0;
  for (const file of MANUAL_PAGES) {
    for (const block of codeBlocks(readPage(file)).filter(isStartTranscript)) {
      transcripts++;
      const shown = block.lines.filter((line) => !line.startsWith('$ '));
      if (!linesAppearInOrder(shown.map(varying), started)) {
        mismatches.push({
          file,
          line: block.line,
          shown: block.lines,
          printed: started,
          current: currentLines(block.lines, started, true),
        });
      }
    }
  }
  expect(transcripts, "npm start's transcripts in the manual").toBeGreaterThanOrEqual(2);
  expect(settle(mismatches), describeMismatches(mismatches)).toEqual([]);

  // And each step said what the guide shows, and the edit survived the restart.
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

it('what the guide has you make at the repository root (my-catalogue/, snapshot.tar.gz) is ignored by git', async () => {
  const made = ['my-catalogue/modules.json', 'snapshot.tar.gz'];
  expect(GUIDE).toContain('cp -r fixtures/catalogue my-catalogue');

  const { stdout } = await promisify(execFile)('git', ['check-ignore', '--no-index', ...made], { cwd: ROOT });

  expect(stdout.trim().split('\n')).toEqual(made);
});
