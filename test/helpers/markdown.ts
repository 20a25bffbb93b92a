/**
 * Markdown as GitHub reads it, for the tests that check the manual's links and references: the lines outside
 * code, and the ids GitHub gives headings.
 */

/**
 * The page's lines, one per line (index = line number - 1): a line inside a fenced code block (or a fence) is
 * empty, every other one has its inline code spans removed (links inside them are not links).
 */
export function proseLines(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      lines.push('');
      continue;
    }
    lines.push(fence === undefined ? withoutCodeSpans(line) : '');
  }
  return lines;
}

/**
 * `line` without its code spans: a run of n backticks up to the next run of exactly n.
 * @example withoutCodeSpans('a `b` c ``d`e`` f') // → 'a  c  f'
 */
function withoutCodeSpans(line: string): string {
  let out = '';
  let i = 0;
  while (i < line.length) {
    if (line[i] !== '`') {
      out += line[i];
      i += 1;
      continue;
    }
    const run = /^`+/.exec(line.slice(i))![0];
    const close = new RegExp(`(?<!\`)${run}(?!\`)`, 'g');
    close.lastIndex = i + run.length;
    const end = close.exec(line);
    if (!end) {
      out += run;
      i += run.length;
      continue;
    }
    i = end.index + run.length;
  }
  return out;
}

/**
 * GitHub's heading id: lower case, markup and punctuation removed, each space a hyphen; repeats get -1, -2….
 * @example headingIds('# Licence and attribution (CC BY 4.0)\n## `npm start`') // → Set {'licence-and-attribution-cc-by-40', 'npm-start'}
 */
export function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    const heading = fence === undefined ? /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line) : null;
    if (!heading) continue;
    const text = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}
