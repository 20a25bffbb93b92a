/**
 * The manual as the doc checks read it: its pages, their fenced code blocks with line numbers, and rewriting
 * lines in place (`npm run docs:examples` makes stale examples current: UPDATE_DOCS=1).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

/** The pages whose examples must match the product: the README and every page of docs/. */
export const MANUAL_PAGES: readonly string[] = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** Set by `npm run docs:examples`: the checks rewrite what is stale instead of failing. */
export const UPDATING = process.env.UPDATE_DOCS === '1';

/** How to make a stale example current, for failure messages. */
export const HOW_TO_UPDATE =
  'run `npm run docs:examples` to rewrite it from the fixture (then review the diff), or fix the example by hand';

export interface CodeBlock {
  /** The fence's info string (`sh`, `console`, `ts`, or ''). */
  info: string;
  /** 1-based line number of the block's first line of content. */
  line: number;
  lines: string[];
}

/**
 * The fenced code blocks of a page, with the line number of their first content line.
 * @example codeBlocks('x\n```sh\necho\n```\n') // → [{ info: 'sh', line: 3, lines: ['echo'] }]
 */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: CodeBlock | undefined;
  let fence = '';
  markdown.split('\n').forEach((text, index) => {
    const marker = /^\s*(`{3,}|~{3,})(.*)$/.exec(text);
    if (!open && marker) {
      fence = marker[1]!;
      open = { info: marker[2]!.trim(), line: index + 2, lines: [] };
    } else if (open && marker && marker[1]!.startsWith(fence) && marker[2]!.trim() === '') {
      blocks.push(open);
      open = undefined;
    } else if (open) open.lines.push(text);
  });
  return blocks;
}

/** The `## ` section of a page that a 1-based line is in ('' before the first). */
export function sectionAt(markdown: string, line: number): string {
  let section = '';
  let fence = false;
  markdown
    .split('\n')
    .slice(0, line)
    .forEach((text) => {
      if (/^\s*(```|~~~)/.test(text)) fence = !fence;
      const heading = !fence && /^## (.+)$/.exec(text)?.[1];
      if (heading) section = heading;
    });
  return section;
}

export function readPage(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}

/** Replace whole lines of a page (1-based line → new text), as `npm run docs:examples` does. */
export function rewriteLines(file: string, replacements: ReadonlyMap<number, string>): void {
  if (replacements.size === 0) return;
  const lines = readPage(file).split('\n');
  for (const [line, text] of replacements) lines[line - 1] = text;
  writeFileSync(join(ROOT, file), lines.join('\n'));
}
