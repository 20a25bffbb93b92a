/**
 * What the manual shows of an output, compared with the output itself. The manual may leave out what varies or
 * what is long with `…`:
 * - in a line of text, `…` stands for any text (a duration, a port, a request id); a line that is only `…`
 *   stands for any number of lines;
 * - in JSON (an API answer), `…` stands for the rest of a string (`"AgJ…"`), for members of an object or
 *   elements of an array that are left out (`{"id":101,…}`, `[{…},…]`).
 * `rewriteShown` makes a stale example current again with the same elisions (`npm run docs:examples`).
 */

const ELLIPSIS = '…';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Whether `actual` (lines of output) is what `shown` shows.
 * @example linesShow(['20 modules, from …', '…'], ['20 modules, from A-100', '3 more']) // → true
 */
export function linesShow(shown: readonly string[], actual: readonly string[]): boolean {
  const pattern = shown
    .map((line) =>
      line.trim() === ELLIPSIS
        ? '(?:[^\\n]*\\n)*?'
        : `${line.split(ELLIPSIS).map(escapeRegExp).join('[^\\n]*')}\\n`,
    )
    .join('');
  return new RegExp(`^${pattern}$`).test(actual.map((line) => `${line}\n`).join(''));
}

/** A JSON value as the manual shows it: JSON, and the markers of what is left out. */
type Shown =
  | { kind: 'value'; value: null | boolean | number | string }
  | { kind: 'prefix'; text: string }
  | { kind: 'object'; members: ({ key: string; value: Shown } | 'more')[] }
  | { kind: 'array'; elements: (Shown | 'more')[] };

/** Parses JSON with `…` left-outs. Throws on anything else. */
export function parseShown(text: string): Shown {
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`not JSON with … at ${at}: ${what} in ${text.slice(Math.max(0, at - 20), at + 20)}`);
  };
  /** Steps over the closing bracket, answering what it closed. */
  const closing = (shown: Shown): Shown => {
    at++;
    return shown;
  };
  const space = () => {
    while (/\s/.test(text[at] ?? '')) at++;
  };
  const value = (): Shown | 'more' => {
    space();
    const c = text[at];
    if (c === ELLIPSIS) {
      at++;
      return 'more';
    }
    if (c === '{') {
      at++;
      const members: ({ key: string; value: Shown } | 'more')[] = [];
      space();
      if (text[at] === '}') return closing({ kind: 'object', members });
      for (;;) {
        space();
        if (text[at] === ELLIPSIS) {
          at++;
          members.push('more');
        } else {
          const key = string();
          if (key.kind !== 'value') fail('a key with …');
          space();
          if (text[at++] !== ':') fail('":" expected');
          const member = value();
          if (member === 'more') fail('… as a value');
          members.push({ key: String((key as { value: string }).value), value: member as Shown });
        }
        space();
        if (text[at] === ',') at++;
        else if (text[at] === '}') return closing({ kind: 'object', members });
        else fail('"," or "}" expected');
      }
    }
    if (c === '[') {
      at++;
      const elements: (Shown | 'more')[] = [];
      space();
      if (text[at] === ']') return closing({ kind: 'array', elements });
      for (;;) {
        elements.push(value());
        space();
        if (text[at] === ',') at++;
        else if (text[at] === ']') return closing({ kind: 'array', elements });
        else fail('"," or "]" expected');
      }
    }
    if (c === '"') return string();
    const literal = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(at))?.[0];
    if (!literal) return fail('a value expected');
    at += literal.length;
    return { kind: 'value', value: JSON.parse(literal) as null | boolean | number };
  };
  const string = (): Shown => {
    const match = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(at));
    if (!match) return fail('a string expected');
    at += match[0].length;
    const decoded = JSON.parse(match[0]) as string;
    return decoded.endsWith(ELLIPSIS)
      ? { kind: 'prefix', text: decoded.slice(0, -1) }
      : { kind: 'value', value: decoded };
  };
  const parsed = value();
  space();
  if (at !== text.length || parsed === 'more') fail('trailing text');
  return parsed as Shown;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether the JSON value `actual` is what `shown` shows: the members shown are there, in the answer's order,
 * with values shown likewise, and no other member unless `…` is among them; the elements shown are the
 * first ones (and the last ones after a `…`); a `"text…"` string starts with `text`.
 * @example jsonShows(parseShown('{"data":[{"id":101,…},…]}'), { data: [{ id: 101, name: 'x' }, { id: 102 }] }) // → true
 */
export function jsonShows(shown: Shown, actual: unknown): boolean {
  switch (shown.kind) {
    case 'value':
      return shown.value === actual;
    case 'prefix':
      return typeof actual === 'string' && actual.startsWith(shown.text);
    case 'object': {
      if (!isObject(actual)) return false;
      const keys = Object.keys(actual);
      let from = 0;
      for (const member of shown.members) {
        if (member === 'more') continue;
        const index = keys.indexOf(member.key, from);
        if (index < 0 || !jsonShows(member.value, actual[member.key])) return false;
        from = index + 1;
      }
      const named = shown.members.filter((member) => member !== 'more').length;
      return shown.members.includes('more') || named === keys.length;
    }
    case 'array': {
      if (!Array.isArray(actual)) return false;
      const cut = shown.elements.indexOf('more');
      const head = (cut < 0 ? shown.elements : shown.elements.slice(0, cut)) as Shown[];
      const tail = (cut < 0 ? [] : shown.elements.slice(cut + 1)) as Shown[];
      if (cut < 0 && head.length !== actual.length) return false;
      if (head.length + tail.length > actual.length) return false;
      return (
        head.every((element, i) => jsonShows(element, actual[i])) &&
        tail.every((element, i) => jsonShows(element, actual[actual.length - tail.length + i]))
      );
    }
  }
}

/**
 * `actual` shown with the left-outs of `shown` (compact JSON, as the API sends it): the same members and as
 * many elements, strings cut as long as before; what the answer gained is shown unless `shown` left things out
 * there.
 * @example rewriteShown(parseShown('{"v":"AUf_…","n":1}'), { v: 'AgJMR-E', n: 2 }) // → '{"v":"AgJM…","n":2}'
 */
export function rewriteShown(shown: Shown, actual: unknown): string {
  if (shown.kind === 'prefix' && typeof actual === 'string') {
    return JSON.stringify(
      `${actual.slice(0, shown.text.length)}${actual.length > shown.text.length ? ELLIPSIS : ''}`,
    );
  }
  if (shown.kind === 'object' && isObject(actual)) {
    const more = shown.members.includes('more');
    const template = new Map(
      shown.members.flatMap((member) => (member === 'more' ? [] : [[member.key, member.value] as const])),
    );
    const parts: string[] = [];
    let skipped = false;
    for (const [key, value] of Object.entries(actual)) {
      const inner = template.get(key);
      if (inner || !more) {
        if (skipped) parts.push(ELLIPSIS);
        skipped = false;
        parts.push(`${JSON.stringify(key)}:${inner ? rewriteShown(inner, value) : JSON.stringify(value)}`);
      } else skipped = true;
    }
    if (skipped) parts.push(ELLIPSIS);
    return `{${parts.join(',')}}`;
  }
  if (shown.kind === 'array' && Array.isArray(actual)) {
    const cut = shown.elements.indexOf('more');
    if (cut < 0)
      return `[${actual.map((element, i) => rewriteOrPlain(shown.elements[i], element)).join(',')}]`;
    const head = shown.elements.slice(0, cut) as Shown[];
    const tail = shown.elements.slice(cut + 1) as Shown[];
    const parts = head.map((element, i) => rewriteShown(element, actual[i]));
    if (actual.length > head.length + tail.length) parts.push(ELLIPSIS);
    parts.push(...tail.map((element, i) => rewriteShown(element, actual[actual.length - tail.length + i])));
    return `[${parts.join(',')}]`;
  }
  return JSON.stringify(actual);
}

function rewriteOrPlain(shown: Shown | 'more' | undefined, actual: unknown): string {
  return shown && shown !== 'more' ? rewriteShown(shown, actual) : JSON.stringify(actual);
}

/**
 * A line of console output as the manual shows it, with what changes from run to run left out: a port of
 * 127.0.0.1 (npm start's servers take free ones) and a duration (`2.8 s`).
 * @example varying('published x, 2.8 s') // → 'published x, … s'
 */
export function varying(line: string): string {
  return line
    .replace(/127\.0\.0\.1:\d+/g, `127.0.0.1:${ELLIPSIS}`)
    .replace(/\b\d+(?:\.\d+)? s\b/g, `${ELLIPSIS} s`);
}

/**
 * Whether every line shown (but `…` lines) is a line of `actual`, in the same order, others between them
 * allowed: a transcript that shows some lines of a longer output (npm start's).
 * @example linesAppearInOrder(['ready at …', '…', 'Ctrl-C'], ['x', 'ready at http://h', 'y', 'Ctrl-C']) // → true
 */
export function linesAppearInOrder(shown: readonly string[], actual: readonly string[]): boolean {
  let from = 0;
  for (const line of shown) {
    if (line.trim() === ELLIPSIS) continue;
    const index = actual.findIndex((candidate, i) => i >= from && linesShow([line], [candidate]));
    if (index < 0) return false;
    from = index + 1;
  }
  return true;
}
