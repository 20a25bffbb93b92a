import type { S3Client } from '@aws-sdk/client-s3';
import { type LocalServer, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { s3Client } from '../../../aws/sdk.js';
import { type CommandOptions, EXIT, main } from '../../../builder/cli.js';
import { HISTORY_FILE } from '../../../builder/publish/history.js';
import { publishCatalogue } from '../../../builder/publish/publish.js';
import { renderCatalogue } from '../../../builder/render/full.js';
import type { Snapshot } from '../../../builder/snapshot/snapshot.js';
import { openTarget } from '../../../builder/target.js';
import { POINTER_KEY } from '../../../store/layout.js';
import { DirectoryObjectStore } from '../../../store/objects/directory.js';
import type { WritableObjectStore } from '../../../store/objects/interface.js';
import { S3ObjectStore } from '../../../store/objects/s3.js';
import {
  fingerprint,
  fixtureSnapshot,
  removeTemporaryDirectories,
  smallSnapshot,
  temporaryDirectory,
  writeSnapshotFiles,
} from '../../helpers/builder.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-01-05T10:00:00Z');
const at = (ms: number) => () => new Date(ms);

let s3: (LocalServer & { bucket: string }) | undefined;
let client: S3Client | undefined;

beforeAll(async () => {
  s3 = await startS3('publish-test');
  client = s3Client({ endpoint: s3.endpoint });
});

afterAll(async () => {
  client?.destroy();
  await s3?.dispose();
  removeTemporaryDirectories();
});

/** The fixture with one module's description changed: a different version sharing most objects. */
function edited(label: string): Snapshot {
  const snapshot = smallSnapshot();
  snapshot.modules[5]!.description = `Edited: ${label}`;
  return snapshot;
}

async function contents(store: WritableObjectStore, prefix: string): Promise<Map<string, Buffer>> {
  const result = new Map<string, Buffer>();
  for await (const { key } of store.list(prefix)) {
    const got = await store.get(key);
    if (got.ok) result.set(key.slice(prefix.length), got.body);
  }
  return result;
}

async function objectKeys(store: WritableObjectStore): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const { key } of store.list('o/')) keys.add(key.slice(2));
  return keys;
}

const idsOf = (snapshot: Snapshot) => new Set(renderCatalogue(snapshot).objects.keys());
const union = (...sets: Set<string>[]) => new Set(sets.flatMap((set) => [...set]));

describe('publishing', () => {
  it('gives the same keys and bytes in a directory and in S3', async () => {
    const directory = new DirectoryObjectStore(temporaryDirectory('same-dir'));
    const bucket = new S3ObjectStore({ client: client!, bucket: s3!.bucket });
    const snapshot = smallSnapshot();

    const inDirectory = await publishCatalogue({ store: directory, snapshot, now: at(T0) });
    const inS3 = await publishCatalogue({
      store: bucket,
      prefix: 'cat/v1/',
      snapshot,
      now: at(T0),
      concurrency: 8,
    });

    expect(inS3).toMatchObject({ version: inDirectory.version, objects: inDirectory.objects });
    const fromDirectory = await contents(directory, '');
    const fromS3 = await contents(bucket, 'cat/v1/');
    expect([...fromS3.keys()].sort()).toEqual([...fromDirectory.keys()].sort());
    for (const [key, bytes] of fromDirectory) expect(fromS3.get(key)!.equals(bytes), key).toBe(true);
    expect(fromDirectory.get(POINTER_KEY)!.equals(renderCatalogue(snapshot).pointerBytes)).toBe(true);
  });

  it('re-publishing the same snapshot uploads nothing and leaves every file untouched', async () => {
    const root = temporaryDirectory('again');
    const store = new DirectoryObjectStore(root);
    const first = await publishCatalogue({ store, snapshot: fixtureSnapshot(), now: at(T0) });
    const before = fingerprint(root);

    const second = await publishCatalogue({ store, snapshot: fixtureSnapshot(), now: at(T0 + HOUR) });

    expect(first.objects.added).toBe(first.objects.total);
    expect(second).toMatchObject({
      pointerChanged: false,
      objects: { added: 0, removed: 0 },
      bytes: { added: 0 },
    });
    expect(second.objects.unchanged).toBe(first.objects.total);
    expect(fingerprint(root)).toEqual(before);
  });

  it('a dry run writes nothing and predicts what the publish then does', async () => {
    const root = temporaryDirectory('dry');
    const store = new DirectoryObjectStore(root);
    await publishCatalogue({ store, snapshot: fixtureSnapshot(), now: at(T0) });
    const before = fingerprint(root);

    const dry = await publishCatalogue({ store, snapshot: edited('dry'), dryRun: true, now: at(T0 + HOUR) });
    expect(fingerprint(root)).toEqual(before);
    const real = await publishCatalogue({ store, snapshot: edited('dry'), now: at(T0 + HOUR) });

    expect(dry.objects.added).toBeGreaterThan(0);
    expect({ ...dry, seconds: 0, dryRun: false }).toEqual({ ...real, seconds: 0 });
  });

  it('keeps superseded versions for the retention period, then collects exactly what nothing retained uses', async () => {
    const root = temporaryDirectory('gc');
    const store = new DirectoryObjectStore(root);
    const [a, b, c] = [edited('A'), edited('B'), edited('C')];
    const versionFiles = async () => {
      const keys: string[] = [];
      for await (const { key } of store.list('versions/')) keys.push(key);
      return keys.sort();
    };

    const first = await publishCatalogue({ store, snapshot: a, now: at(T0) });
    await publishCatalogue({ store, snapshot: b, now: at(T0 + HOUR) }); // A superseded at T0+1h
    await publishCatalogue({ store, snapshot: c, now: at(T0 + 24 * HOUR) }); // B superseded at T0+24h
    expect(await objectKeys(store)).toEqual(union(idsOf(a), idsOf(b), idsOf(c)));

    const late = await publishCatalogue({ store, snapshot: c, now: at(T0 + 25 * HOUR + 1) }); // A is 24h+1ms old
    expect(await objectKeys(store)).toEqual(union(idsOf(b), idsOf(c)));
    expect(late.objects.removed).toBe(
      union(idsOf(a), idsOf(b), idsOf(c)).size - union(idsOf(b), idsOf(c)).size,
    );
    expect(late.versionsRemoved).toBe(1);
    expect(await versionFiles()).not.toContain(`versions/${first.version}.json`);
    expect(await versionFiles()).not.toContain(`versions/${first.version}.manifest`); // collected with it

    const strict = await publishCatalogue({ store, snapshot: c, now: at(T0 + 26 * HOUR), retentionMs: 0 });
    expect(await objectKeys(store)).toEqual(idsOf(c));
    expect(await versionFiles()).toEqual(
      [HISTORY_FILE, `versions/${strict.version}.manifest`, `versions/${strict.version}.json`].sort(),
    );
  });

  it('records when each version became current and was superseded', async () => {
    const store = new DirectoryObjectStore(temporaryDirectory('log'));
    const first = await publishCatalogue({ store, snapshot: edited('1'), now: at(T0) });
    const second = await publishCatalogue({ store, snapshot: edited('2'), now: at(T0 + HOUR) });

    const log = await store.get(HISTORY_FILE);
    expect(log.ok && JSON.parse(log.body.toString())).toEqual({
      format: 1,
      versions: [
        {
          version: first.version,
          current_since: '2026-01-05T10:00:00.000Z',
          superseded_at: '2026-01-05T11:00:00.000Z',
        },
        { version: second.version, current_since: '2026-01-05T11:00:00.000Z', superseded_at: null },
      ],
    });
  });
});

describe('the CLI', () => {
  async function run(
    argv: string[],
    options: CommandOptions = {},
  ): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const spyOut = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    const spyErr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      err.push(String(chunk));
      return true;
    });
    try {
      return { code: await main(argv, options), out: out.join(''), err: err.join('') };
    } finally {
      spyOut.mockRestore();
      spyErr.mockRestore();
    }
  }

  it('builds to S3 with --endpoint and prints one summary line', async () => {
    const source = writeSnapshotFiles(smallSnapshot(10));
    const out = `s3://${s3!.bucket}/cli`;

    const dry = await run([
      'build',
      '--source',
      source,
      '--out',
      out,
      '--endpoint',
      s3!.endpoint,
      '--dry-run',
    ]);
    const real = await run(['build', '--source', source, '--out', out, '--endpoint', s3!.endpoint]);

    expect(dry.code).toBe(EXIT.ok);
    expect(dry.out).toMatch(/^dry run for s3:\/\/publish-test\/cli\/: version \S+; would add \d+ objects \(/);
    expect(real.code).toBe(EXIT.ok);
    expect(real.out).toMatch(
      /^published \S{22} to s3:\/\/publish-test\/cli\/: \d+ objects added \([\d.]+ [kM]B\), 0 unchanged, 0 removed \(0 B\), 0 version files removed, [\d.]+ s\n$/,
    );
  });

  it.each([
    ['', {}],
    [' (with a builder fingerprint: the current version is read before validating)', { builder: 'b' }],
  ])(
    'exits 3 when the store is unreachable, and the message says the old version stays current%s',
    async (_, options) => {
      const source = writeSnapshotFiles(fixtureSnapshot());
      const argv = [
        'build',
        '--source',
        source,
        '--out',
        's3://nobody-home/x',
        '--endpoint',
        'http://127.0.0.1:9',
      ];
      const result = await run(argv, options);

      expect(result.code).toBe(EXIT.publishFailed);
      expect(result.err).toMatch(/^publish failed: s3 get x\/current\.json failed/);
      expect(result.err.match(/publish failed/g)).toHaveLength(1);
      expect(result.err).toContain('the previous version is still current');

      // The snapshot's own problems come first: an invalid snapshot is refused whatever the store.
      const broken = fixtureSnapshot();
      broken.modules[0]!.hp = -1;
      const invalid = await run(['build', '--source', writeSnapshotFiles(broken), ...argv.slice(3)], options);
      expect(invalid.code).toBe(EXIT.invalid);
      expect(invalid.err).toContain('snapshot refused: 1 problem; nothing was written');
    },
  );

  it.each([
    [['build', '--source', 'x'], '--out is required'],
    [
      ['build', '--source', 'x', '--out', 'y', '--retention', '1 day'],
      '--retention 1 day: expected 0 or a number',
    ],
    [
      ['build', '--source', 'x', '--out', 'y', '--concurrency', '0'],
      '--concurrency 0: expected an integer ≥ 1',
    ],
    [
      ['build', '--source', 'x', '--out', 'y', '--endpoint', 'http://h'],
      '--endpoint applies only to an s3:// --out',
    ],
    [['build', '--source', 'x', '--out', 's3://B/x'], 'expected s3://bucket or s3://bucket/prefix'],
    [['validate', '--source', 'x', '--out', 'y'], '--out does not apply to validate'],
    [['publish'], '--source is required'], // publish is build
    [['publish', '--source', '/no/such/dir', '--out', 'y'], '--source /no/such/dir: no such directory'],
    [
      ['generate', '--modules', 'many', '--seed', '1', '--out', 'y'],
      '--modules many: expected an integer ≥ 0',
    ],
  ])('exits 2 on a usage error: %j', async (argv, message) => {
    const result = await run(argv);

    expect(result.code).toBe(EXIT.usage);
    expect(result.err).toContain(message);
  });

  it('documents every command, option and exit code in --help', async () => {
    const result = await run(['--help']);

    expect(result.code).toBe(EXIT.ok);
    for (const word of [
      'build',
      'validate',
      'generate',
      '--source',
      '--out',
      '--endpoint',
      '--dry-run',
      '--retention',
    ]) {
      expect(result.out).toContain(word);
    }
    expect(result.out).toMatch(/Exit codes:\n {2}0 .*\n {2}1 .*\n(.*\n)? {2}2 .*\n {2}3 /);
  });

  it('generates a snapshot that validates', async () => {
    const out = temporaryDirectory('generated');
    const generated = await run(['generate', '--modules', '50', '--seed', '3', '--out', out]);
    const validated = await run(['validate', '--source', out]);

    expect(generated.code).toBe(EXIT.ok);
    expect(validated).toMatchObject({ code: EXIT.ok, out: expect.stringContaining('valid (50 modules') });
  });
});

describe('targets', () => {
  it('parses s3 addresses into bucket and prefix', async () => {
    const target = await openTarget('s3://my-bucket/a/b/', 'http://127.0.0.1:1');
    target.close();
    expect(target).toMatchObject({ prefix: 'a/b/', description: 's3://my-bucket/a/b/' });
    expect((await openTarget('s3://my-bucket')).prefix).toBe('');
  });
});

describe('--verbose and repair', () => {
  it('--dry-run --verbose lists each changed list variant and detail and each object it would upload', async () => {
    const source = writeSnapshotFiles(fixtureSnapshot());
    const edited = fixtureSnapshot();
    const module = edited.modules.find((m) => m.id === 101)!;
    module.name = `${module.name} Mk2`;
    const editedSource = writeSnapshotFiles(edited);
    const out = temporaryDirectory('verbose');
    const { main: cli } = await import('../../../builder/cli.js');
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(...String(chunk).trimEnd().split('\n'));
      return true;
    });
    try {
      expect(await cli(['build', '--source', source, '--out', out])).toBe(EXIT.ok);
      lines.length = 0;
      expect(await cli(['build', '--source', editedSource, '--out', out, '--dry-run', '--verbose'])).toBe(
        EXIT.ok,
      );
    } finally {
      spy.mockRestore();
    }
    expect(lines.some((line) => /^changed {2}modules\/101: [\w-]{22} → [\w-]{22}$/.test(line))).toBe(true);
    expect(
      lines.some((line) => /^changed {2}modules\?sort=name: [\w-]{22} \(204 records\) → /.test(line)),
    ).toBe(true);
    const uploads = lines.filter((line) => line.startsWith('would upload '));
    expect(uploads.length).toBeGreaterThan(0);
    expect(lines.at(-1)).toMatch(new RegExp(`^dry run for .*would add ${uploads.length} objects`));
  });

  it('repair lists the target, uploads what is missing and collects orphans', async () => {
    const root = temporaryDirectory('repair');
    const store = new DirectoryObjectStore(root);
    const snapshot = smallSnapshot();
    await publishCatalogue({ store, snapshot, now: at(T0) });
    const ids = [...idsOf(snapshot)];
    await store.delete([`o/${ids[0]}`, `o/${ids[1]}`]);
    await store.put(`o/${'Q'.repeat(22)}`, Buffer.from('orphan'));

    const repaired = await publishCatalogue({ store, snapshot, repair: true, now: at(T0 + HOUR) });

    expect(repaired).toMatchObject({ mode: 'repair', pointerChanged: false });
    expect(repaired.objects).toMatchObject({ added: 2, removed: 1 });
    expect(await objectKeys(store)).toEqual(idsOf(snapshot));
  });
});
