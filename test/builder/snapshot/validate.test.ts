import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXIT, main } from '../../../builder/cli.js';
import { publishCatalogue } from '../../../builder/publish/publish.js';
import type { Snapshot } from '../../../builder/snapshot/snapshot.js';
import { validateSnapshot } from '../../../builder/snapshot/validate.js';
import { DirectoryObjectStore } from '../../../store/objects/directory.js';
import {
  badExport,
  fingerprint,
  fixtureSnapshot,
  removeTemporaryDirectories,
  temporaryDirectory,
  writeSnapshotFiles,
} from '../../helpers/builder.js';

type Raw = Record<keyof Snapshot, Record<string, unknown>[]>;

/** A published target that every refused build must leave exactly as it is. */
let target: string;
let before: Record<string, string>;

beforeAll(async () => {
  target = temporaryDirectory('refused-target');
  await publishCatalogue({ store: new DirectoryObjectStore(target), snapshot: fixtureSnapshot() });
  before = fingerprint(target);
});

afterAll(() => {
  removeTemporaryDirectories();
});

/** Run `build` in-process on a broken copy of the fixture; returns the exit code and stderr lines. */
async function buildBroken(
  mutate: (raw: Raw) => void,
  rawFiles: Partial<Record<keyof Snapshot, string | null>> = {},
): Promise<{ code: number; lines: string[] }> {
  const raw = fixtureSnapshot() as unknown as Raw;
  mutate(raw);
  const source = writeSnapshotFiles(raw, rawFiles);
  const written: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    const code = await main(['build', '--source', source, '--out', target]);
    return { code, lines: written.join('').split('\n').filter(Boolean) };
  } finally {
    spy.mockRestore();
  }
}

const module0 = (raw: Raw) => raw.modules[0]!; // id 101, Doepfer A-110-1, tags 1, 6, 14
const noChange = () => {};

const cases: [
  rule: string,
  mutate: (raw: Raw) => void,
  expected: string | RegExp,
  files?: Record<string, string | null>,
][] = [
  ['a missing file', noChange, 'tags.json: file is missing', { tags: null }],
  [
    'an unparseable file',
    noChange,
    // Where, as a line and column; then the parser's own words, which differ between Node versions.
    /^standards\.json: is not valid JSON: line 1, column 3: Expected property name or '}'/,
    { standards: '[{' },
  ],
  [
    'a trailing comma, said with its line and column (V8 gives no position for it)',
    noChange,
    "standards.json: is not valid JSON: line 3, column 1: Unexpected token ']' (JSON allows no comma before it)",
    { standards: '[\n{"id": 0, "name": "Eurorack", "height_mm": 128.5},\n]' },
  ],
  [
    'a byte-order mark',
    noChange,
    'tags.json: is not valid JSON: it starts with a byte-order mark (U+FEFF); save it as UTF-8 without one',
    { tags: '\ufeff[]' },
  ],
  [
    'a file that is not an array',
    noChange,
    'manufacturers.json: must be a JSON array of records (got object {"id":1})',
    { manufacturers: '{"id":1}' },
  ],
  [
    'a record that is not an object',
    (raw) => {
      raw.tags.push(42 as never);
    },
    `tags.json: record at index 45: must be an object (got number 42)`,
  ],
  [
    'a duplicate id',
    (raw) => {
      raw.modules[1]!.id = 101;
    },
    'modules.json: record 101: id: duplicate id (the record at index 1 repeats the id of index 0)',
  ],
  [
    'a dangling manufacturer',
    (raw) => {
      module0(raw).manufacturer_id = 999;
    },
    'modules.json: record 101: manufacturer_id: references manufacturer 999, which is not in manufacturers.json',
  ],
  [
    'a dangling standard',
    (raw) => {
      module0(raw).standard = 77;
    },
    'modules.json: record 101: standard: references standard 77, which is not in standards.json',
  ],
  [
    'a dangling tag',
    (raw) => {
      module0(raw).tag_ids = [1, 5000];
    },
    'modules.json: record 101: tag_ids[1]: references tag 5000, which is not in tags.json',
  ],
  [
    'a repeated tag',
    (raw) => {
      module0(raw).tag_ids = [1, 6, 1];
    },
    'modules.json: record 101: tag_ids[2]: repeats tag 1',
  ],
  [
    'a wrong type',
    (raw) => {
      module0(raw).hp = '8';
    },
    'modules.json: record 101: hp: must be a positive integer (got string "8")',
  ],
  [
    'a missing field',
    (raw) => {
      delete module0(raw).name;
    },
    'modules.json: record 101: name: is missing',
  ],
  [
    'a zero id where positive is required',
    (raw) => {
      raw.manufacturers[0]!.id = 0;
    },
    'manufacturers.json: record at index 0: id: must be a positive integer (got number 0)',
  ],
  [
    'a negative standard id (0 is valid)',
    (raw) => {
      raw.standards[1]!.id = -1;
    },
    'standards.json: record at index 1: id: must be a nonnegative integer (got number -1)',
  ],
  [
    'a non-integer',
    (raw) => {
      module0(raw).hp = 8.5;
    },
    'modules.json: record 101: hp: must be a positive integer (got number 8.5)',
  ],
  [
    'an unknown tag type',
    (raw) => {
      raw.tags[0]!.type = 'spicy';
    },
    'tags.json: record 1: type: must be one of nature, character, voice, source, filter, modulation, effect, ' +
      'sequencing, utility, blank, or null (got string "spicy")',
  ],
  [
    'an unknown jack signal',
    (raw) => {
      (module0(raw).ins as Record<string, unknown>[])[0]!.signal = 'voltage';
    },
    'modules.json: record 101: ins[0].signal: must be one of audio, cv, pitch, gate, trigger, clock, other ' +
      '(got string "voltage")',
  ],
  [
    'an empty name',
    (raw) => {
      raw.manufacturers[0]!.name = '  ';
    },
    'manufacturers.json: record 1: name: must be a non-empty string (got string "  ")',
  ],
  [
    'a malformed country',
    (raw) => {
      raw.manufacturers[0]!.country = 'Germany';
    },
    'manufacturers.json: record 1: country: must be an ISO 3166-1 alpha-2 code (two capital letters) or null ' +
      '(got string "Germany")',
  ],
  [
    'a misspelt field: the closest missing one suggested',
    (raw) => {
      const module = module0(raw);
      module.manufactuer_id = module.manufacturer_id;
      delete module.manufacturer_id;
    },
    'modules.json: record 101: manufactuer_id: unknown field; did you mean manufacturer_id?',
  ],
  [
    'a misspelt field inside a jack',
    (raw) => {
      const jack = (module0(raw).ins as Record<string, unknown>[])[0]!;
      jack.singal = jack.signal;
      delete jack.signal;
    },
    'modules.json: record 101: ins[0].singal: unknown field; did you mean signal?',
  ],
  [
    'an unknown field',
    (raw) => {
      module0(raw).weight_g = 120;
    },
    'modules.json: record 101: weight_g: unknown field (allowed: id, name, manufacturer_id, hp, standard, ' +
      'depth_mm, power_12v_ma, power_m12v_ma, power_5v_ma, description, tag_ids, ins, outs, panels)',
  ],
  [
    'a forbidden price field',
    (raw) => {
      module0(raw).price_eur = 139;
    },
    'modules.json: record 101: price_eur: forbidden field: images, prices and store data are never published',
  ],
  [
    'a forbidden store field on a manufacturer',
    (raw) => {
      raw.manufacturers[0]!.shop = 'doepfer.de';
    },
    'manufacturers.json: record 1: shop: forbidden field: images, prices and store data are never published',
  ],
  [
    'a forbidden field inside a jack',
    (raw) => {
      (module0(raw).outs as Record<string, unknown>[])[1]!.sku = 'X1';
    },
    'modules.json: record 101: outs[1].sku: forbidden field: images, prices and store data are never published',
  ],
  [
    'a forbidden panel image filename',
    (raw) => {
      (module0(raw).panels as Record<string, unknown>[])[0]!.image_filename = 'a110.jpg';
    },
    'modules.json: record 101: panels[0].image_filename: forbidden field: images, prices and store data are ' +
      'never published',
  ],
  [
    'a forbidden field deep inside an unknown one',
    (raw) => {
      module0(raw).meta = { listing: { url: 'x' } };
    },
    'modules.json: record 101: meta.listing: forbidden field: images, prices and store data are never published',
  ],
  [
    'a value that is a link',
    (raw) => {
      module0(raw).description = 'https://example.com/a110.html';
    },
    'modules.json: record 101: description: forbidden value: looks like a link or an image file name; images ' +
      'and links are never published (got string "https://example.com/a110.html")',
  ],
  [
    'a value that is an image file name',
    (raw) => {
      (module0(raw).panels as Record<string, unknown>[])[0]!.name = 'a110-front.png';
    },
    'modules.json: record 101: panels[0].name: forbidden value: looks like a link or an image file name; images ' +
      'and links are never published (got string "a110-front.png")',
  ],
];

describe('a broken snapshot is refused with a precise message and nothing written', () => {
  it.each(cases)('%s', async (_rule, mutate, expected, files) => {
    const { code, lines } = await buildBroken(mutate, files ?? {});

    expect(code).toBe(EXIT.invalid);
    expect(lines).toContainEqual(typeof expected === 'string' ? expected : expect.stringMatching(expected));
    expect(lines.at(-1)).toMatch(/^snapshot refused: \d+ problems?; nothing was written$/);
    expect(fingerprint(target)).toEqual(before);
  });

  it('lists every problem at once, in file and record order', async () => {
    const { code, lines } = await buildBroken((raw) => {
      raw.tags[0]!.type = 'spicy';
      module0(raw).hp = 0;
      raw.modules[2]!.manufacturer_id = 999;
      raw.modules[3]!.image = 'x';
    });

    expect(code).toBe(EXIT.invalid);
    expect(lines).toEqual([
      expect.stringMatching(/^tags\.json: record 1: type: /),
      'modules.json: record 101: hp: must be a positive integer (got number 0)',
      'modules.json: record 103: manufacturer_id: references manufacturer 999, which is not in manufacturers.json',
      'modules.json: record 106: image: forbidden field: images, prices and store data are never published',
      'snapshot refused: 4 problems; nothing was written',
    ]);
    expect(fingerprint(target)).toEqual(before);
  });

  it('accepts standard 0, null measurements and modules without relations', () => {
    const snapshot = fixtureSnapshot();
    Object.assign(snapshot.modules[0]!, {
      standard: 0,
      depth_mm: null,
      tag_ids: [],
      ins: [],
      outs: [],
      panels: [],
    });

    expect(validateSnapshot(snapshot).ok).toBe(true);
  });

  it('validate exits 1 on a broken snapshot and 0 on the fixture', async () => {
    const broken = writeSnapshotFiles(fixtureSnapshot(), { modules: '[{"id":-1}]' });
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await main(['validate', '--source', broken])).toBe(EXIT.invalid);
      expect(await main(['validate', '--source', writeSnapshotFiles(fixtureSnapshot())])).toBe(EXIT.ok);
    } finally {
      spy.mockRestore();
      out.mockRestore();
    }
  });
});

/** Run `validate` in-process on `source`; the exit code and stderr lines (and that nothing threw). */
async function validateLines(source: string): Promise<{ code: number; lines: string[]; out: string }> {
  const written: string[] = [];
  let out = '';
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  const std = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    const code = await main(['validate', '--source', source]);
    return { code, lines: written.join('').split('\n').filter(Boolean), out };
  } finally {
    err.mockRestore();
    std.mockRestore();
  }
}

describe('bounded: any snapshot is refused with its problems counted, never a crash', () => {
  it('a bad export of 70,000 modules with two wrong fields each: 140,000 problems counted, the first 1,000 listed, exit 1', async () => {
    const { code, lines } = await validateLines(writeSnapshotFiles(badExport(70_000)));

    expect(code).toBe(EXIT.invalid);
    expect(lines).toHaveLength(1000 + 2);
    expect(lines[0]).toBe('modules.json: record 1: hp: must be a positive integer (got number 0)');
    expect(lines.slice(-2)).toEqual([
      '… and 139000 more problems not listed',
      'snapshot refused: 140000 problems; nothing was written',
    ]);
  }, 60_000);

  it('1 MiB of {} as modules.json (the upload test and the bench take 10 MiB): every one of its 4,893,350 problems counted, exit 1', async () => {
    const modules = `[${new Array(Math.floor(2 ** 20 / 3)).fill('{}').join(',')}]`;
    const { code, lines } = await validateLines(writeSnapshotFiles(fixtureSnapshot(), { modules }));

    expect(code).toBe(EXIT.invalid);
    expect(lines[0]).toBe('modules.json: record at index 0: id: is missing');
    expect(lines.at(-1)).toBe('snapshot refused: 4893350 problems; nothing was written');
  }, 60_000);

  it('a record larger than 1 MiB is refused without being parsed; the others are still checked', async () => {
    const snapshot = fixtureSnapshot();
    snapshot.modules[1]!.description = 'x'.repeat(2 ** 20);
    snapshot.modules[2]!.hp = 0;
    const { code, lines } = await validateLines(writeSnapshotFiles(snapshot));

    expect(code).toBe(EXIT.invalid);
    expect(lines).toEqual([
      expect.stringMatching(
        /^modules\.json: record at index 1: is 1,04\d,\d{3} bytes of JSON; a record may have at most 1,048,576 bytes$/,
      ),
      `modules.json: record ${snapshot.modules[2]!.id}: hp: must be a positive integer (got number 0)`,
      'snapshot refused: 2 problems; nothing was written',
    ]);
  });

  it('names in problems cannot forge a line: controls and line separators escaped', async () => {
    const snapshot = fixtureSnapshot();
    (snapshot.modules[0] as unknown as Record<string, unknown>)['x\nmodules.json: valid\u2028'] = 1;
    const { lines } = await validateLines(writeSnapshotFiles(snapshot));

    expect(lines[0]).toMatch(
      /^modules\.json: record 101: x\\u000amodules\.json: valid\\u2028: unknown field/,
    );
  });
});

describe('an empty catalogue', () => {
  it('is refused unless the snapshot says it means one (snapshot.json); the flag only on an empty one', async () => {
    const empty = { ...fixtureSnapshot(), modules: [] };
    const refused = await validateLines(writeSnapshotFiles(empty));
    expect(refused.code).toBe(EXIT.invalid);
    expect(refused.lines).toEqual([
      'modules.json: holds no modules: publishing it would empty the catalogue; if that is what you mean, add snapshot.json with {"empty_catalogue": true}',
      'snapshot refused: 1 problem; nothing was written',
    ]);

    const meant = writeSnapshotFiles(empty);
    writeFileSync(join(meant, 'snapshot.json'), '{"empty_catalogue": true}\n');
    const accepted = await validateLines(meant);
    expect(accepted.code).toBe(EXIT.ok);
    expect(accepted.out).toMatch(/: valid \(0 modules, 25 manufacturers/);

    const stale = writeSnapshotFiles(fixtureSnapshot());
    writeFileSync(join(stale, 'snapshot.json'), '{"empty_catalogue": true, "note": 1}');
    expect((await validateLines(stale)).lines).toEqual([
      'snapshot.json: note: unknown field (allowed: empty_catalogue)',
      'snapshot.json: empty_catalogue: says the catalogue is empty, but modules.json holds 204 modules: remove it',
      'snapshot refused: 2 problems; nothing was written',
    ]);
  });
});
