/**
 * The snapshot read exactly, or refused with the place (builder/snapshot/load.ts with exact.ts, issue 47): every
 * way a file can say something JSON.parse would read otherwise — repeated names, bytes that are not UTF-8, a
 * byte-order mark or UTF-16, lone surrogates, numbers a double does not hold, nesting past the bound — and
 * text that does not print as itself, each refused with its file, record, field, line and column. The same
 * bytes give the same lines through every door: `validate`, the `upload` command's check, and the builder that
 * the Lambda function and `npm start` run on an upload (publishUpload). And whatever a snapshot holds (random
 * bytes, token soup, hostile records: fast-check), reading it ends valid or refused, never in a throw, and an
 * upload of it ends `invalid` or `published`, never `failed`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { EXIT, main } from '../../../builder/cli.js';
import { MAX_DEPTH } from '../../../builder/snapshot/elements.js';
import { loadSnapshot } from '../../../builder/snapshot/load.js';
import { formatProblem } from '../../../builder/snapshot/problems.js';
import { META_FILE, SNAPSHOT_FILES } from '../../../builder/snapshot/snapshot.js';
import type { S3EventRecord } from '../../../builder/upload/event.js';
import { publishUpload } from '../../../builder/upload/publish-upload.js';
import { packSnapshot } from '../../../builder/upload-pack.js';
import type { ListedObject } from '../../../store/objects/interface.js';
import { MemoryObjectStore } from '../../../store/objects/memory.js';
import { fixtureSnapshot, removeTemporaryDirectories, temporaryDirectory } from '../../helpers/builder.js';

afterAll(removeTemporaryDirectories);

/** A memory store that lists when each object was written, as S3 does (the builder orders uploads by it). */
class BucketInMemory extends MemoryObjectStore {
  readonly #written = new Map<string, Date>();
  override async put(...args: Parameters<MemoryObjectStore['put']>): Promise<void> {
    this.#written.set(args[0], new Date());
    return super.put(...args);
  }
  override async *list(prefix: string): AsyncIterable<ListedObject> {
    for await (const object of super.list(prefix)) {
      const lastModified = this.#written.get(object.key);
      yield lastModified ? { ...object, lastModified } : object;
    }
  }
}

type Files = Record<string, string | Buffer>;

/** The fixture's files as a publisher exports them (pretty-printed), with `changed` in place of some. */
function fixtureFiles(changed: Files = {}): Files {
  const snapshot = fixtureSnapshot();
  const files: Files = {};
  for (const [kind, file] of Object.entries(SNAPSHOT_FILES)) {
    files[file] = JSON.stringify(snapshot[kind as keyof typeof snapshot], null, 2);
  }
  return { ...files, ...changed };
}

function folderOf(files: Files): string {
  const folder = temporaryDirectory('exact');
  mkdirSync(folder, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(folder, file), text);
  return folder;
}

/** Run the CLI in this process: exit code, stderr and stdout lines. */
async function cli(...args: string[]): Promise<{ code: number; err: string[]; out: string[] }> {
  let err = '';
  let out = '';
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err += String(chunk);
    return true;
  });
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    const code = await main(args);
    return { code, err: err.split('\n').filter(Boolean), out: out.split('\n').filter(Boolean) };
  } finally {
    e.mockRestore();
    o.mockRestore();
  }
}

let uploads = 0;
/** The builder on an upload of `archive` (as the Lambda function and npm start run it): its report. */
async function builderReport(archive: Buffer) {
  const store = new BucketInMemory();
  const key = `incoming/${String(++uploads).padStart(6, '0')}.tar.gz`;
  await store.put(key, archive);
  const read = await store.get(key);
  const record: S3EventRecord = {
    eventName: 'ObjectCreated:Put',
    eventTime: new Date().toISOString(),
    userIdentity: { principalId: 'AWS:publisher' },
    s3: {
      bucket: { name: 'catalogue' },
      object: { key, size: archive.length, eTag: read.ok ? read.etag : '' },
    },
  };
  const result = await publishUpload(record, {
    store,
    prefix: 'catalogue/',
    incomingPrefix: 'incoming/',
    reportsPrefix: 'reports/',
  });
  if (result.kind !== 'reported') throw new Error(`${result.kind}: ${result.message}`);
  return result.report;
}

/** What each door says of `files`: validate's lines, the upload command's, the builder's (problem lines only). */
async function throughEveryDoor(files: Files) {
  const folder = folderOf(files);
  const validate = await cli('validate', '--source', folder);
  const upload = await cli('upload', folder);
  const report = await builderReport(await packSnapshot(folder));
  const problemLines = (lines: string[]) =>
    lines.filter((line) => !/^(snapshot refused|… and \d+ more)/.test(line));
  return {
    validate: { code: validate.code, lines: problemLines(validate.err), last: validate.err.at(-1) },
    upload: { code: upload.code, lines: problemLines(upload.err), last: upload.out.at(-1) },
    builder: {
      outcome: report.outcome,
      lines: report.problems.map((p) => p.message),
      count: report.problem_count,
    },
  };
}

/** The fixture's modules.json (pretty-printed) with its first `"name": "A-110-1"` replaced. */
const firstModule = (replace: (text: string) => string) =>
  fixtureFiles()
    ['modules.json']!.toString()
    .replace(/^ {4}"id": 101,[\s\S]*?\n {2}\}/m, (record) => replace(record));
/** `text` with its first `find` replaced by `before`, raw `bytes`, `after` (bytes that are not UTF-8). */
const withBytes = (text: string, find: string, before: string, bytes: number[], after: string) => {
  const at = text.indexOf(find);
  return Buffer.concat([
    Buffer.from(text.slice(0, at) + before),
    Buffer.from(bytes),
    Buffer.from(after + text.slice(at + find.length)),
  ]);
};
const nest = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

const cases: [finding: string, files: Files, lines: (string | RegExp)[]][] = [
  [
    "a repeated id: JSON.parse would keep the last (990101 served with 101's data)",
    { 'modules.json': firstModule((r) => r.replace('"id": 101,', '"id": 101,\n    "id": 990101,')) },
    [
      'modules.json: record at index 0: id: line 4, column 5: repeats a name of its object (first at line 3, column 5): JSON.parse would keep only the last of the two, so one would be lost without a word; a name may appear once in an object (RFC 7493): remove one',
    ],
  ],
  [
    'a repeated name inside a jack',
    { 'modules.json': firstModule((r) => r.replace(/"signal": "(\w+)"/, '"signal": "$1", "name": "again"')) },
    [
      /^modules\.json: record at index 0: ins\[0\]\.name: line \d+, column \d+: repeats a name of its object \(first at line \d+, column \d+\)/,
    ],
  ],
  [
    'Latin-1 bytes in a manufacturer name (an export from a Latin-1 database)',
    {
      'manufacturers.json': withBytes(
        fixtureFiles()['manufacturers.json']!.toString(),
        '"Doepfer"',
        '"D',
        [0xf6],
        'pfer"',
      ),
    },
    [
      'manufacturers.json: record at index 0: name: line 4, column 15: holds bytes that are not UTF-8 (f6) in a string: in Windows-1252 or Latin-1 they would read "ö"; save the file as UTF-8 (JSON text is UTF-8, RFC 8259)',
    ],
  ],
  [
    'ff fe in a name',
    {
      'modules.json': withBytes(
        firstModule((r) => r),
        '"A-110-1"',
        '"A-110-1 ',
        [0xff, 0xfe],
        '"',
      ),
    },
    [
      /^modules\.json: record at index 0: name: line 4, column 22: holds bytes that are not UTF-8 \(ff fe\) in a string/,
    ],
  ],
  [
    'a UTF-16 file (as Windows PowerShell writes it)',
    {
      'tags.json': Buffer.concat([
        Buffer.from([0xff, 0xfe]),
        Buffer.from(fixtureFiles()['tags.json']!.toString(), 'utf16le'),
      ]),
    },
    [
      'tags.json: is UTF-16 (little-endian) text (it starts with that byte-order mark): a snapshot file is UTF-8 (RFC 8259): save it as UTF-8 without a byte-order mark',
    ],
  ],
  [
    'a UTF-16 file without a byte-order mark',
    { 'tags.json': Buffer.from(fixtureFiles()['tags.json']!.toString(), 'utf16le') },
    [/^tags\.json: looks like UTF-16 or UTF-32 \(little-endian\) text/],
  ],
  [
    'an escaped lone surrogate in a description',
    { 'modules.json': firstModule((r) => r.replace('"description": "', '"description": "\\ud800')) },
    [
      /^modules\.json: record at index 0: description: line 12, column 21: \\ud800 is half of a UTF-16 surrogate pair/,
    ],
  ],
  [
    '1e309 (today "got number null")',
    { 'modules.json': firstModule((r) => r.replace('"depth_mm": 45', '"depth_mm": 1e309')) },
    [
      'modules.json: record at index 0: depth_mm: line 8, column 17: 1e309 is larger than any number a double can hold (about 1.8e308): it would be read as Infinity; write a smaller number',
    ],
  ],
  [
    '2^53 + 1 as an id (today "…992")',
    { 'modules.json': firstModule((r) => r.replace('"id": 101', '"id": 9007199254740993')) },
    [
      'modules.json: record at index 0: id: line 3, column 11: 9007199254740993 is an integer beyond ±9,007,199,254,740,991, the largest a double holds exactly, so it would be read as 9007199254740992: write a smaller number',
    ],
  ],
  [
    '2^53 + 1 written with an exponent, as an id',
    { 'modules.json': firstModule((r) => r.replace('"id": 101', '"id": 9.007199254740993e15')) },
    [/^modules\.json: record at index 0: id: must be a positive integer of at most 9007199254740991/],
  ],
  [
    '-0 (today shown as 0)',
    { 'modules.json': firstModule((r) => r.replace('"hp": 8', '"hp": -0')) },
    [
      'modules.json: record at index 0: hp: line 6, column 11: -0 is negative zero, which no catalogue value means (it would be published as 0): write 0',
    ],
  ],
  [
    'a record nested 200,000 levels (18.8 KB, today a stack overflow)',
    { 'modules.json': `[${nest(200_000)}]` },
    [
      `modules.json: record at index 0: line 1, column ${MAX_DEPTH + 1}: nests arrays and objects deeper than ${MAX_DEPTH} levels (counting the file's outermost value as one; a module needs four): it is refused unread; nest less deeply`,
    ],
  ],
  [
    'a module with a field nested 5,000 levels after 203 good ones (the deployed handler threw)',
    {
      'modules.json': firstModule((r) => r.replace('"hp": 8', `"hp": 8, "extra": ${nest(5_000)}`)),
    },
    [/^modules\.json: record at index 0: line 6, column \d+: nests arrays and objects deeper than 64 levels/],
  ],
  [
    'a whole file nested 200,000 levels, not an array',
    { 'standards.json': `{"a":${nest(200_000)}}` },
    [/^standards\.json: line 1, column \d+: nests arrays and objects deeper than 64 levels/],
  ],
  [
    'snapshot.json with a repeated flag',
    { [META_FILE]: '{"empty_catalogue": false, "empty_catalogue": true}' },
    [/^snapshot\.json: empty_catalogue: line 1, column 28: repeats a name of its object/],
  ],
  [
    'snapshot.json in UTF-16',
    { [META_FILE]: Buffer.from('\ufeff{"empty_catalogue": false}', 'utf16le') },
    [/^snapshot\.json: is UTF-16 \(little-endian\) text/],
  ],
  [
    'bytes that are not UTF-8 between records',
    { 'tags.json': withBytes(fixtureFiles()['tags.json']!.toString(), '\n]', '\n', [0xff], ']') },
    [
      /^tags\.json: is not valid JSON: line \d+, column 1: holds bytes that are not UTF-8 \(ff\): in Windows-1252 or Latin-1 they would read "ÿ"; save the file as UTF-8/,
    ],
  ],
  [
    'a right-to-left override in a module name (labels refuse it)',
    { 'modules.json': firstModule((r) => r.replace('"A-110-1"', '"A-110-1 \\u202e1-011-A"')) },
    [
      'modules.json: record 101: name: must be printable text: it holds U+202E at character 9, an invisible format character (zero-width, bidirectional or other format control): remove it',
    ],
  ],
  [
    'NUL in a module name',
    { 'modules.json': firstModule((r) => r.replace('"A-110-1"', '"A-110-1\\u0000"')) },
    [
      /^modules\.json: record 101: name: must be printable text: it holds U\+0000 at character 8, a control character: remove it$/,
    ],
  ],
  [
    'a manufacturer named only by Hangul fillers',
    {
      'manufacturers.json': fixtureFiles()
        ['manufacturers.json']!.toString()
        .replace('"Doepfer"', '"\u3164\u3164"'),
    },
    [
      /^manufacturers\.json: record 1: name: must be printable text: it holds U\+3164 at character 1, a blank that prints as nothing but is not a space: remove it$/,
    ],
  ],
  [
    'a jack name of 99 combining marks',
    {
      'modules.json': firstModule((r) =>
        r.replace(/("ins": \[\s*\{\s*"name": ")[^"]*/, `$1a${'\u0301'.repeat(99)}`),
      ),
    },
    [
      /^modules\.json: record 101: ins\[0\]\.name: must be printable text: it holds more than 8 combining marks in a row/,
    ],
  ],
];

describe('the snapshot read exactly, or refused with the place, the same by validate, upload and the builder', () => {
  it.each(cases)('%s', async (_finding, changed, lines) => {
    const doors = await throughEveryDoor(fixtureFiles(changed));

    expect(doors.validate.lines).toEqual(
      lines.map((line) => (typeof line === 'string' ? line : expect.stringMatching(line))),
    );
    expect(doors.validate.code).toBe(EXIT.invalid);
    expect(doors.validate.last).toMatch(/^snapshot refused: \d+ problems?; nothing was written$/);
    expect(doors.upload.lines, 'the upload command checks as validate does').toEqual(doors.validate.lines);
    expect(doors.upload.code).toBe(EXIT.invalid);
    expect(doors.upload.last).toMatch(/; nothing was uploaded$/);
    expect(doors.builder, 'the builder reports as validate lists').toEqual({
      outcome: 'invalid',
      lines: doors.validate.lines,
      count: doors.validate.lines.length,
    });
  });

  it('a record refused unread leaves the references into its file unjudged, not reported wrongly', async () => {
    // Manufacturer 1's record cannot be read; modules that name manufacturer 1 are not said to dangle.
    const manufacturers = fixtureFiles()
      ['manufacturers.json']!.toString()
      .replace('"id": 1,', '"id": 1, "id": 1,');
    const loaded = await loadSnapshot(folderOf(fixtureFiles({ 'manufacturers.json': manufacturers })));
    expect(loaded.ok).toBe(false);
    if (!loaded.ok)
      expect(loaded.problems.map(formatProblem)).toEqual([
        expect.stringMatching(
          /^manufacturers\.json: record at index 0: id: line \d+, column \d+: repeats a name/,
        ),
      ]);
  });
});

/** The fixture with its first six modules: what the fuzzing changes one file of. */
function smallFiles(): Files {
  const files = fixtureFiles();
  files['modules.json'] = JSON.stringify(fixtureSnapshot().modules.slice(0, 6));
  return files;
}

/** Any bytes at all, or text made of JSON's tokens and of what breaks I-JSON. */
const hostileText = fc.oneof(
  fc.uint8Array({ maxLength: 400 }).map((bytes) => Buffer.from(bytes)),
  fc
    .array(
      fc.constantFrom(
        '[',
        ']',
        '{',
        '}',
        ',',
        ':',
        ' ',
        '\n',
        '"id"',
        '"name"',
        '1',
        '-0',
        '1e309',
        '1e-400',
        '9007199254740993',
        '0.1',
        '"\\ud800"',
        '"\\udc00"',
        '"\\ud83d\\ude00"',
        '"\\u0000"',
        '"\\u202e"',
        '"a"',
        'true',
        'null',
        '\u00e9',
        '\ufeff',
        '"http://x"',
        '"price"',
        '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[',
        ']]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
      ),
      { maxLength: 80 },
    )
    .map((tokens) => Buffer.from(tokens.join(''))),
  fc.constantFrom(
    Buffer.from([0xff, 0xfe, 0x5b, 0x00, 0x5d, 0x00]),
    Buffer.from([0xef, 0xbb, 0xbf, 0x5b, 0x5d]),
    Buffer.from([0xc0, 0xaf]),
  ),
);

/** A fixture module with one field replaced by something hostile (a value JSON can carry, however unwelcome). */
const hostileValue = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    '1e309',
    '-0',
    '9007199254740993',
    '"\\ud800"',
    nest(100),
    nest(64),
    nest(63),
    '"\u3164"',
    '{"a":1,"a":2}',
  ),
);
const hostileModules = fc
  .tuple(
    fc.array(
      fc.tuple(
        fc.constantFrom(
          'id',
          'name',
          'hp',
          'manufacturer_id',
          'ins',
          'panels',
          'tag_ids',
          'description',
          'depth_mm',
          'x',
        ),
        hostileValue,
      ),
      { maxLength: 4 },
    ),
    fc.nat(5),
  )
  .map(([edits, at]) => {
    const modules = fixtureSnapshot()
      .modules.slice(0, 6)
      .map((module) => JSON.stringify(module));
    for (const [field, value] of edits) {
      const raw =
        typeof value === 'string' && /^[-\d"[{]/.test(value) && !value.startsWith('"')
          ? value
          : JSON.stringify(value);
      modules[at] = modules[at]!.replace(/^\{/, `{"${field}":${raw},`);
    }
    return Buffer.from(`[${modules.join(',')}]`);
  });

describe('whatever a snapshot holds: valid or refused, never a throw', () => {
  it('reading any bytes in any file ends valid or refused with its problems, each one line', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.values(SNAPSHOT_FILES), META_FILE),
        fc.oneof(hostileText, hostileModules),
        async (file, bytes) => {
          const files = new Map(
            Object.entries(smallFiles()).map(([name, text]) => [name, Buffer.from(text)]),
          );
          files.set(file, bytes);
          const loaded = await loadSnapshot({ name: 'fuzz', files });
          if (loaded.ok) return;
          expect(loaded.problemCount).toBeGreaterThanOrEqual(loaded.problems.length);
          expect(loaded.problems.length).toBeGreaterThan(0);
          for (const problem of loaded.problems)
            expect(formatProblem(problem)).not.toMatch(/[\n\r\u2028\u2029]/);
        },
      ),
      { numRuns: 500 },
    );
  }, 120_000);

  it('an upload of anything ends invalid or published, never failed', async () => {
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.values(SNAPSHOT_FILES), META_FILE),
        fc.oneof(hostileText, hostileModules),
        async (file, bytes) => {
          const report = await builderReport(
            await packSnapshot(folderOf({ ...smallFiles(), [file]: bytes })),
          );
          outcomes.set(report.outcome, (outcomes.get(report.outcome) ?? 0) + 1);
          expect(report.error).toBeNull();
          expect(['invalid', 'published']).toContain(report.outcome);
        },
      ),
      { numRuns: 120 },
    );
    expect(outcomes.get('invalid')).toBeGreaterThan(60);
  }, 240_000);
});
