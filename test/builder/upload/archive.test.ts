/**
 * The upload format (builder/upload/archive.ts): archives made the way publishers make them (`tar czf`, GNU
 * tar here), and hostile ones (absolute names, `..`, links, duplicates, extra files, bombs, bytes appended,
 * anything at all) refused whole with every reason, never thrown.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../../builder/snapshot/load.js';
import { formatProblem } from '../../../builder/snapshot/problems.js';
import { sourceDigest } from '../../../builder/snapshot/source.js';
import { readSnapshotArchive, UPLOAD_LIMITS, type UploadLimits } from '../../../builder/upload/archive.js';

const FIXTURE = join(import.meta.dirname, '../../../fixtures/catalogue');
const FILES = ['standards.json', 'tags.json', 'manufacturers.json', 'modules.json'];
const scratch = mkdtempSync(join(tmpdir(), 'cat-archive-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let serial = 0;
/** `tar czf <archive> <args…>` run in a fresh copy of the fixture (as `my-catalogue/`); the archive's bytes. */
function tarOf(args: string[], prepare: (root: string) => void = () => {}): Buffer {
  const root = join(scratch, `case-${++serial}`);
  mkdirSync(root);
  cpSync(FIXTURE, join(root, 'my-catalogue'), { recursive: true });
  prepare(root);
  const archive = join(root, 'snapshot.tar.gz');
  execFileSync('tar', ['czf', archive, ...args], { cwd: root });
  return readFileSync(archive);
}

const reasons = async (bytes: Buffer, limits: UploadLimits = UPLOAD_LIMITS) => {
  const read = await readSnapshotArchive(bytes, 'incoming/x.tar.gz', limits);
  return read.ok ? [] : read.problems.map((problem) => `${problem.file}: ${problem.reason}`);
};

describe('archives as tar czf makes them', () => {
  it.each([
    ['the files at the root (-C my-catalogue .)', ['-C', 'my-catalogue', '.']],
    ['the files in one folder (my-catalogue)', ['my-catalogue']],
    ['the files named one by one', ['-C', 'my-catalogue', ...FILES]],
  ])('%s: read as the four files, with the digest of the directory', async (_name, args) => {
    const read = await readSnapshotArchive(tarOf(args), 'incoming/x.tar.gz');

    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect([...read.files.keys()].sort()).toEqual([...FILES].sort());
    const source = { name: 'incoming/x.tar.gz', files: read.files };
    expect(await sourceDigest(source)).toBe(await sourceDigest(FIXTURE));
    const loaded = await loadSnapshot(source);
    expect(loaded.ok && loaded.digest).toBe(await sourceDigest(FIXTURE));
  });

  it('a missing file is the snapshot problem it is for a directory, naming the upload', async () => {
    const read = await readSnapshotArchive(
      tarOf(['-C', 'my-catalogue', 'modules.json', 'tags.json', 'standards.json']),
      'incoming/x.tar.gz',
    );
    expect(read.ok).toBe(true);
    if (!read.ok) return;

    const loaded = await loadSnapshot({ name: 'incoming/x.tar.gz', files: read.files });
    expect(loaded.ok ? [] : loaded.problems).toEqual([
      { file: 'manufacturers.json', reason: 'file is missing from incoming/x.tar.gz' },
    ]);
  });
});

describe('what is refused, every reason at once', () => {
  it('an unexpected file, a link, and a nested copy, each named', async () => {
    const bytes = tarOf(['my-catalogue'], (root) => {
      writeFileSync(join(root, 'my-catalogue', 'notes.txt'), 'hello');
      symlinkSync('/etc/passwd', join(root, 'my-catalogue', 'passwd'));
      mkdirSync(join(root, 'my-catalogue', 'old'));
      writeFileSync(join(root, 'my-catalogue', 'old', 'tags.json'), '[]');
    });

    expect((await reasons(bytes)).sort()).toEqual(
      [
        'incoming/x.tar.gz: my-catalogue/notes.txt: an unexpected file: an upload holds standards.json, tags.json, manufacturers.json, modules.json (and snapshot.json when the snapshot has one) and nothing else',
        'incoming/x.tar.gz: my-catalogue/passwd: a SymbolicLink entry: an upload holds regular files only (no links, devices or special files)',
        'incoming/x.tar.gz: my-catalogue/old/: a nested folder: the four files sit at the root or in one folder',
        'incoming/x.tar.gz: my-catalogue/old/tags.json: in a nested folder: the four files sit at the root or in one folder',
      ].sort(),
    );
  });

  it('names with "..", absolute names, duplicates and two folders', async () => {
    const bytes = tarOf(
      [
        '--absolute-names',
        // A second copy is a file again, not a hard link to the first (that would be refused as a link).
        '--hard-dereference',
        '--transform',
        's,^my-catalogue/tags,../tags,;s,^my-catalogue/standards,/etc/standards,',
        'my-catalogue/tags.json',
        'my-catalogue/standards.json',
        'my-catalogue/modules.json',
        'my-catalogue/modules.json',
        'other/manufacturers.json',
      ],
      (root) => {
        mkdirSync(join(root, 'other'));
        cpSync(join(root, 'my-catalogue', 'manufacturers.json'), join(root, 'other', 'manufacturers.json'));
      },
    );

    expect(await reasons(bytes)).toEqual([
      'incoming/x.tar.gz: ../tags.json: a name with "..": entries stay inside the archive',
      'incoming/x.tar.gz: /etc/standards.json: an absolute name: entries are named relative to the archive',
      'incoming/x.tar.gz: my-catalogue/modules.json: modules.json appears more than once',
      'incoming/x.tar.gz: the snapshot files are in different folders (my-catalogue, other): put all four in one',
    ]);
  });

  it("macOS's ._ files, with the way to leave them out", async () => {
    const bytes = tarOf(['-C', 'my-catalogue', '.'], (root) => {
      writeFileSync(join(root, 'my-catalogue', '._modules.json'), 'resource fork');
    });

    expect(await reasons(bytes)).toEqual([
      'incoming/x.tar.gz: ./._modules.json: an unexpected file: an upload holds standards.json, tags.json, manufacturers.json, modules.json (and snapshot.json when the snapshot has one) and nothing else (macOS tar adds ._ files: run it with COPYFILE_DISABLE=1)',
    ]);
  });

  it('an entry name cannot forge a log line: its line breaks escaped where a problem is printed', async () => {
    // npm start prints each problem on a line of its own (local/uploads.ts), as the CLI does.
    const forged = 'notes\nupload y.tar.gz: published\u2028\r.txt';
    const bytes = tarOf(['-C', 'my-catalogue', '.'], (root) => {
      writeFileSync(join(root, 'my-catalogue', forged), 'hello');
    });
    const read = await readSnapshotArchive(bytes, 'incoming/x.tar.gz');
    const lines = read.ok ? [] : read.problems.map(formatProblem);

    expect(lines).toEqual([
      expect.stringContaining(
        'incoming/x.tar.gz: ./notes\\u000aupload y.tar.gz: published\\u2028\\u000d.txt: an unexpected file',
      ),
    ]);
    expect(lines.join('')).not.toMatch(/[\n\r\u2028\u2029]/);
  });

  it('not gzip, gzip but not tar, a damaged or cut archive', async () => {
    const good = tarOf(['-C', 'my-catalogue', '.']);

    expect(await reasons(Buffer.from('{"modules": []}'))).toEqual([
      'incoming/x.tar.gz: is not gzip-compressed: upload a .tar.gz as `tar czf snapshot.tar.gz -C my-catalogue .` makes it',
    ]);
    expect(await reasons(gzipSync('just some text, not an archive'.repeat(40)))).toEqual([
      expect.stringMatching(
        /^incoming\/x\.tar\.gz: is not a tar archive \(.+\): upload a \.tar\.gz as `tar czf` makes it$/,
      ),
    ]);
    expect(await reasons(good.subarray(0, good.byteLength / 2))).toEqual([
      expect.stringMatching(
        /^incoming\/x\.tar\.gz: cannot be decompressed \(.+\): the upload is damaged or incomplete$/,
      ),
    ]);
    const tar = execFileSync('gzip', ['-dc'], { input: good });
    expect(await reasons(gzipSync(tar.subarray(0, 2000)))).toEqual([
      expect.stringMatching(/^incoming\/x\.tar\.gz: is damaged or incomplete: /),
    ]);
  });

  it('whole gzip data followed by other bytes is said as such, not as damage; trailing zeros (padding) are taken', async () => {
    const good = tarOf(['-C', 'my-catalogue', '.']);
    const appended = (tail: Buffer) => reasons(Buffer.concat([good, tail]));
    for (const tail of [Buffer.from('<html>an error page</html>\n'), Buffer.from([0x1f, 0x8b, 8, 0])]) {
      expect(await appended(tail)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^incoming/x\\.tar\\.gz: ends with ${tail.length} bytes after its gzip data that are not gzip \\(.+\\): the archive before them is whole, but something was appended to it \\(a download or a copy that added bytes, or files joined together\\); upload the \\.tar\\.gz exactly as tar czf wrote it$`,
          ),
        ),
      ]);
    }
    expect(await appended(Buffer.alloc(512))).toEqual([]);
    // Damage inside the gzip data is still damage, wherever it is: a changed byte that still inflates to the
    // same size (a literal) is caught by the trailer's CRC-32.
    for (let tenth = 2; tenth <= 8; tenth++) {
      const flipped = Buffer.from(good);
      flipped[Math.floor((good.length * tenth) / 10)]! ^= 0xff;
      expect(await reasons(Buffer.concat([flipped, Buffer.from('tail')])), `byte at ${tenth}/10`).toEqual([
        expect.stringMatching(
          /^incoming\/x\.tar\.gz: cannot be decompressed \(.+\): the upload is damaged or incomplete$/,
        ),
      ]);
    }
  });

  it('bounds: the compressed size, what it expands to (a bomb stops there), the number of entries', async () => {
    const good = tarOf(['-C', 'my-catalogue', '.']);
    const bomb = gzipSync(Buffer.alloc(4 * 2 ** 20));

    expect(await reasons(good, { ...UPLOAD_LIMITS, compressedBytes: 1000 })).toEqual([
      `incoming/x.tar.gz: is ${good.byteLength} bytes; an upload may have at most 1000`,
    ]);
    expect(await reasons(bomb, { ...UPLOAD_LIMITS, expandedBytes: 2 ** 20 })).toEqual([
      `incoming/x.tar.gz: expands to more than ${2 ** 20} bytes; an upload may hold at most that much`,
    ]);
    const many = tarOf(['-C', 'my-catalogue', '.'], (root) => {
      for (let i = 0; i < 6; i++) mkdirSync(join(root, 'my-catalogue', `d${i}`));
    });
    expect(await reasons(many, { ...UPLOAD_LIMITS, entries: 8 })).toEqual([
      'incoming/x.tar.gz: holds 11 entries; an upload holds the four snapshot files (at most 8 entries)',
    ]);
  });
});

describe('any bytes as an upload', () => {
  it('are read or refused with reasons, never thrown: raw, gzipped, a real archive cut or with bytes flipped', async () => {
    const good = tarOf(['-C', 'my-catalogue', '.']);
    const tar = execFileSync('gzip', ['-dc'], { input: good });
    const upload = fc.oneof(
      fc.uint8Array({ maxLength: 2_000 }).map((bytes) => Buffer.from(bytes)),
      fc.uint8Array({ maxLength: 2_000 }).map((bytes) => gzipSync(bytes)),
      fc.tuple(fc.nat(tar.length), fc.nat(255), fc.nat(tar.length)).map(([at, byte, cut]) => {
        const changed = Buffer.from(tar);
        changed[at] = byte;
        return gzipSync(changed.subarray(0, Math.max(cut, at + 1)));
      }),
      fc.tuple(fc.nat(good.length - 1), fc.nat(255)).map(([at, byte]) => {
        const changed = Buffer.from(good);
        changed[at] = byte;
        return changed;
      }),
    );
    await fc.assert(
      fc.asyncProperty(upload, async (bytes) => {
        const read = await readSnapshotArchive(bytes, 'incoming/x.tar.gz');
        if (!read.ok) expect(read.problems.length).toBeGreaterThan(0);
      }),
      { numRuns: 400 },
    );
  }, 120_000);
});
