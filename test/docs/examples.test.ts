/**
 * Every example of the manual (README.md, docs/*.md) is what the product gives for the fixture catalogue:
 * - each curl line aimed at the local API (`http://127.0.0.1:8787/v1…` or `$CATALOGUE_URL/…`) is sent to the
 *   real proxy core over the fixture (docs/reference/exchanges.ts, as the reference page's examples are) and
 *   must be answered (2xx or 304), and the answer shown under it (`# {…}`, or a status `# 304`) must be the
 *   answer, `…` standing for what is left out;
 * - every version id or object id written out is the version the fixture publishes (where the text says the
 *   fixture was published), or sits in an example a test runs (the publisher's first publish:
 *   test/docs/publishing.test.ts); any other must be elided (`y6IM…`).
 * A failure names the file, the line and what to change; `npm run docs:examples` rewrites what is stale.
 */
import { describe, expect, it } from 'vitest';
import { type Exchange, exchange, fixtureVersion } from '../../docs/reference/exchanges.js';
import {
  codeBlocks,
  HOW_TO_UPDATE,
  MANUAL_PAGES,
  readPage,
  rewriteLines,
  sectionAt,
  UPDATING,
} from '../helpers/manual.js';
import { jsonShows, parseShown, rewriteShown } from '../helpers/shown.js';

/** Examples another test runs for real, against a real `npm start`: their outputs are checked there. */
const CHECKED_ELSEWHERE = [
  {
    file: 'docs/publishing.md',
    section: 'Your first publish: edit, check, publish, see',
    by: 'test/docs/publishing.test.ts',
  },
];

interface Problem {
  file: string;
  line: number;
  message: string;
  /** The line as it should read, when it can be rewritten. */
  fix?: string;
}

/** A curl command of a code block, continuation lines joined, with what is shown of its answer. */
interface CurlExample {
  file: string;
  line: number;
  command: string;
  /** The answer shown: a JSON line (`# {…}`) or a status, and the line it is on. */
  shown?: { text: string; line: number; prefix: string };
}

const API = /(?:http:\/\/127\.0\.0\.1:8787\/v1|\$\{?CATALOGUE_URL\}?)(\/[^\s"'\\]*)?/;

function curlExamples(file: string, markdown: string): CurlExample[] {
  const found: CurlExample[] = [];
  for (const block of codeBlocks(markdown)) {
    if (!['sh', 'bash', 'console', ''].includes(block.info)) continue;
    for (let i = 0; i < block.lines.length; i++) {
      // A command that starts with curl (alone, after a prompt or in a $(…)), not the word in a comment.
      if (!/(?:^\s*(?:\$\s+)?|\$\()curl\s/.test(block.lines[i]!)) continue;
      const first = i;
      let command = block.lines[i]!;
      while (/\\$/.test(command) && i + 1 < block.lines.length)
        command = `${command.slice(0, -1)} ${block.lines[++i]!}`;
      if (!API.test(command)) continue;
      const example: CurlExample = { file, line: block.line + first, command };
      const trailing = /\s#\s*(\d{3})\s*$/.exec(command);
      const next = block.lines[i + 1];
      const answer = next !== undefined ? /^(\s*#\s)(\s*[{[].*|\d{3})\s*$/.exec(next) : null;
      if (trailing) example.shown = { text: trailing[1]!, line: block.line + i, prefix: '' };
      else if (answer)
        example.shown = { text: answer[2]!.trim(), line: block.line + i + 1, prefix: answer[1]! };
      found.push(example);
    }
  }
  return found;
}

/** What the command asks: method and target, `$CURSOR` and `$ETAG` filled in from the same query's answer. */
async function ask(command: string, name: string): Promise<Exchange> {
  const method = /\s-X\s+OPTIONS\b/.test(command) ? 'OPTIONS' : /\s-s?I\b/.test(command) ? 'HEAD' : 'GET';
  let target = `/v1${API.exec(command)?.[1] ?? ''}`;
  const headers: Record<string, string> = {};
  if (target.includes('$CURSOR') || /\$ETAG/.test(command)) {
    const base = target.replace(/[&?]cursor=\$CURSOR/, '');
    const first = await exchange(`${name} first`, { method: 'GET', target: base });
    const body = JSON.parse(first.body ?? '{}') as { page?: { next_cursor?: string } };
    target = target.replace('$CURSOR', body.page?.next_cursor ?? '');
    if (/\$ETAG/.test(command)) headers['if-none-match'] = first.headers.etag ?? '';
  }
  return exchange(name, { method, target, headers });
}

async function curlProblems(example: CurlExample): Promise<Problem[]> {
  const where = { file: example.file, line: example.line };
  const answer = await ask(example.command, `${example.file}:${example.line}`);
  const request = `${answer.request.method} ${answer.request.target}`;
  const { shown } = example;
  if (!shown) {
    return answer.status < 400
      ? []
      : [
          {
            ...where,
            message: `\`${request}\` is answered ${answer.status} ${answer.body ?? ''} by the fixture`,
          },
        ];
  }
  if (/^\d{3}$/.test(shown.text)) {
    return String(answer.status) === shown.text
      ? []
      : [
          {
            ...where,
            message: `\`${request}\` shows ${shown.text}, the fixture's answer is ${answer.status}`,
          },
        ];
  }
  const actual = JSON.parse(answer.body ?? 'null') as unknown;
  const template = parseShown(shown.text);
  if (jsonShows(template, actual)) return [];
  const current = rewriteShown(template, actual);
  return [
    {
      file: example.file,
      line: shown.line,
      message: `the answer shown for \`${request}\` is stale:\n    shown:  ${shown.text}\n    now:    ${current}`,
      fix: `${shown.prefix}${current}`,
    },
  ];
}

/**
 * A version or object id: 22 base64url characters, mixed case, with a digit, `-` or `_` — not a camelCase or
 * Snake_Case name made of words.
 */
const ID = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{22}(?![A-Za-z0-9_-])/g;
const isId = (token: string) =>
  /[A-Z]/.test(token) &&
  /[a-z]/.test(token) &&
  /[0-9_-]/.test(token) &&
  !/^[A-Za-z][a-z0-9]*(?:[-_]?[A-Z][a-z][a-z0-9]*)+$/.test(token);

function idProblems(file: string, markdown: string, version: string): Problem[] {
  const problems: Problem[] = [];
  const lines = markdown.split('\n');
  lines.forEach((text, index) => {
    const line = index + 1;
    const section = sectionAt(markdown, line);
    if (CHECKED_ELSEWHERE.some((checked) => checked.file === file && checked.section === section)) return;
    for (const token of text.match(ID) ?? []) {
      if (!isId(token)) continue;
      const ofTheFixture =
        /\bversion\s+$/.test(text.slice(0, text.indexOf(token))) && /fixtures\/catalogue/.test(text);
      if (ofTheFixture) {
        if (token !== version) {
          problems.push({
            file,
            line,
            message: `version ${token} is not what fixtures/catalogue publishes now (${version})`,
            fix: text.replace(token, version),
          });
        }
        continue;
      }
      problems.push({
        file,
        line,
        message: `\`${token}\` looks like a version or object id, and nothing produces it from the fixture or checks it: elide it (\`${token.slice(0, 4)}…\`), or show an output that a test produces (see test/docs/examples.test.ts)`,
      });
    }
  });
  return problems;
}

function report(problems: readonly Problem[]): string {
  return problems
    .map(
      (problem) =>
        `${problem.file}:${problem.line}: ${problem.message}${problem.fix ? `\n    (${HOW_TO_UPDATE})` : ''}`,
    )
    .join('\n');
}

/** Rewrites what can be (UPDATE_DOCS=1); the rest stays a problem. */
function settle(problems: Problem[]): Problem[] {
  if (!UPDATING) return problems;
  for (const file of new Set(problems.map((problem) => problem.file))) {
    const fixes = new Map<number, string>();
    for (const problem of problems)
      if (problem.file === file && problem.fix !== undefined) fixes.set(problem.line, problem.fix);
    rewriteLines(file, fixes);
  }
  return problems.filter((problem) => problem.fix === undefined);
}

describe('the examples of the manual are what the fixture gives', () => {
  it('every curl line is answered, and every answer shown is the answer', async () => {
    const problems: Problem[] = [];
    let checked = 0;
    for (const file of MANUAL_PAGES) {
      for (const example of curlExamples(file, readPage(file))) {
        checked += example.shown ? 1 : 0;
        problems.push(...(await curlProblems(example)));
      }
    }

    expect(checked, 'answers shown in the manual').toBeGreaterThanOrEqual(4);
    expect(settle(problems), report(problems)).toEqual([]);
  });

  it("every version id written out is the fixture's, or elided, or checked by a test that runs it", async () => {
    const version = await fixtureVersion();
    const problems = MANUAL_PAGES.flatMap((file) => idProblems(file, readPage(file), version));

    expect(settle(problems), report(problems)).toEqual([]);
  });
});

describe('the check itself', () => {
  it('finds the answer under a curl line, and fails a stale one naming file and line', async () => {
    const page = [
      '```sh',
      'curl -s -H "Authorization: Bearer $CATALOGUE_KEY" \'http://127.0.0.1:8787/v1/standards?limit=1\'',
      '# {"data":[{"id":0,"name":"Eurorack 4U","height_mm":128.5}],"page":{"next_cursor":"Zz…"}}',
      '```',
    ].join('\n');
    const [example] = curlExamples('docs/x.md', page);

    const problems = await curlProblems(example!);

    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: 'docs/x.md', line: 3 });
    expect(problems[0]!.message).toContain('GET /v1/standards?limit=1');
    expect(problems[0]!.fix).toMatch(
      /^# \{"data":\[\{"id":0,"name":"Eurorack 3U","height_mm":128\.5\}\],"page":\{"next_cursor":"Ag…"\}\}$/,
    );
  });

  it('fails a stale fixture version and an id nothing checks', () => {
    const page = [
      'Catalogue: version 5Y02VPPGu7T5AwoZpVHquA, published from fixtures/catalogue by npm start just now',
      'changed  modules/106: y6IMWriGf3aQTj3j7aAGVg → tZjQ…',
      'settings `p99DurationThresholdMs`',
    ].join('\n');

    const problems = idProblems('docs/x.md', page, '_BKItsyZiIu7TGIQ27u_9w');

    expect(problems.map((problem) => [problem.line, problem.fix])).toEqual([
      [
        1,
        'Catalogue: version _BKItsyZiIu7TGIQ27u_9w, published from fixtures/catalogue by npm start just now',
      ],
      [2, undefined],
    ]);
  });
});
