/**
 * The local DynamoDB's store (src/dynamo-journal.ts): in memory, durable through its journal — across a
 * stop and start, a restart, kill -9 and a cut last line; bounded on disk by compaction under a stream of
 * writes to one item (the metering pattern); on a really full disk (a tmpfs), a write it cannot journal whole
 * refused and not applied, the journal left whole lines, a start and serving on the full disk; and a data
 * directory of an earlier version (dynalite on LevelDB) read once into it, its LevelDB files removed.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { JOURNAL_FILE, replay } from '../src/dynamo-journal.js';
import { type LocalServer, startDynamo } from '../src/servers.js';
import { mountSmallDisk, SMALL_DISK_REFUSED, type SmallDisk } from '../src/small-disk.js';
import { createTables, dynamoClient } from './helpers/aws.js';

const TABLES = { keysTable: 'journal-keys', countersTable: 'journal-counters' };
/** The package's folder: the killed writer's imports are relative to it. */
const PACKAGE = join(import.meta.dirname, '..');
const directories: string[] = [];
const servers: LocalServer[] = [];

function directory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'journal-test-'));
  directories.push(dir);
  return dir;
}

async function started(dir: string, options: { compactBytes?: number } = {}): Promise<LocalServer> {
  const server = await startDynamo({ directory: dir, ...options });
  servers.push(server);
  return server;
}

afterEach(async () => {
  for (const server of servers.splice(0)) await server.dispose();
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function withClient<T>(
  server: LocalServer,
  use: (client: ReturnType<typeof dynamoClient>) => Promise<T>,
) {
  const client = dynamoClient({ endpoint: server.endpoint });
  try {
    return await use(client);
  } finally {
    client.destroy();
  }
}

const put = (pk: string, n: number) =>
  new PutItemCommand({ TableName: TABLES.countersTable, Item: { pk: { S: pk }, n: { N: String(n) } } });
const read = async (server: LocalServer, pk: string) =>
  withClient(server, async (client) => {
    const answer = await client.send(
      new GetItemCommand({ TableName: TABLES.countersTable, Key: { pk: { S: pk } }, ConsistentRead: true }),
    );
    return answer.Item?.n?.N;
  });

describe('replay', () => {
  it('keeps the last operation on each key and drops a last line cut short', () => {
    const text = '["a",{"x":1}]\n["b",{"x":2}]\n["a",{"x":3}]\n["b"]\n["c",{"x":';
    expect([...replay(text)]).toEqual([['a', '{"x":3}']]);
  });

  it('drops a line an earlier version cut short on a full disk and wrote the next one after', () => {
    const text = '["a",{"x":1}]\n["b",{"x":["c",{"x":3}]\n["d",{"x":4}]\n';
    expect([...replay(text)]).toEqual([
      ['a', '{"x":1}'],
      ['d', '{"x":4}'],
    ]);
  });
});

describe('the local DynamoDB keeps its data', () => {
  it('across a stop and a start (same store) and a restart on the same directory (the journal)', async () => {
    const dir = directory();
    let server = await started(dir);
    await withClient(server, async (client) => {
      await createTables(client, TABLES);
      await client.send(put('kept', 1));
    });
    await server.stop();
    await server.start();
    expect(await read(server, 'kept')).toBe('1');
    await server.dispose();
    servers.length = 0;
    server = await started(dir);
    expect(await read(server, 'kept')).toBe('1');
    expect(existsSync(join(dir, JOURNAL_FILE))).toBe(true);
  });

  it('in a directory that does not exist yet, made as dynalite on LevelDB made it', async () => {
    const dir = join(directory(), 'not', 'yet');
    let server = await started(dir);
    await withClient(server, async (client) => {
      await createTables(client, TABLES);
      await client.send(put('made', 1));
    });
    await server.dispose();
    servers.length = 0;
    server = await started(dir);
    expect(await read(server, 'made')).toBe('1');
  });

  it('through kill -9, and a journal whose last line was cut by it', async () => {
    const dir = directory();
    const script = `
      import { createTables, dynamoClient } from './test/helpers/aws.ts';
      import { PutItemCommand } from '@aws-sdk/client-dynamodb';
      import { startDynamo } from './src/servers.ts';
      const server = await startDynamo({ directory: ${JSON.stringify(dir)} });
      const client = dynamoClient({ endpoint: server.endpoint });
      await createTables(client, ${JSON.stringify(TABLES)});
      for (let n = 0; n < 20; n++) {
        await client.send(new PutItemCommand({ TableName: '${TABLES.countersTable}', Item: { pk: { S: 'item' + n }, n: { N: String(n) } } }));
      }
      process.stdout.write('written\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: PACKAGE,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('written') && resolve());
      child.once('exit', (code) => reject(new Error(`the writer exited with ${code}`)));
    });
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    // A write the kill cut in half.
    appendFileSync(join(dir, JOURNAL_FILE), '["item-journal-counters~half",{"pk":{"S":');
    const server = await started(dir);
    for (const n of [0, 19]) expect(await read(server, `item${n}`)).toBe(String(n));
  });
});

describe('the journal on disk', () => {
  it('stays bounded under a stream of writes to one item, as metering writes', async () => {
    const dir = directory();
    const compactBytes = 64 * 1024;
    const server = await started(dir, { compactBytes });
    let largest = 0;
    await withClient(server, async (client) => {
      await createTables(client, TABLES);
      for (let n = 0; n < 200; n++) {
        await client.send(
          new UpdateItemCommand({
            TableName: TABLES.countersTable,
            Key: { pk: { S: 'key#2026-11' } },
            UpdateExpression:
              'SET month_count = if_not_exists(month_count, :zero) + :one, padding = :padding',
            ExpressionAttributeValues: {
              ':zero': { N: '0' },
              ':one': { N: '1' },
              ':padding': { S: 'x'.repeat(1500) },
            },
          }),
        );
        largest = Math.max(largest, statSync(join(dir, JOURNAL_FILE)).size);
      }
    });
    // ~320 KB of writes; the file never holds much more than the threshold (one write past it, then compacted).
    expect(largest).toBeLessThan(compactBytes + 2048);
    const item = await withClient(server, (client) =>
      client.send(new GetItemCommand({ TableName: TABLES.countersTable, Key: { pk: { S: 'key#2026-11' } } })),
    );
    expect(item.Item?.month_count?.N).toBe('200');
  });
});

const skipped = SMALL_DISK_REFUSED === undefined ? '' : ` (skipped: ${SMALL_DISK_REFUSED})`;

describe.skipIf(SMALL_DISK_REFUSED !== undefined)(`on a 4 MiB disk that fills up${skipped}`, () => {
  let disk: SmallDisk | undefined;
  afterEach(() => {
    disk?.unmount();
    disk = undefined;
  });

  it('refuses a write it cannot journal whole, applies none of it, and starts and serves on the full disk', async () => {
    disk = mountSmallDisk(4);
    const dir = join(disk.path, 'dynamodb');
    let server = await started(dir, { compactBytes: 1024 });
    await withClient(server, async (client) => {
      await createTables(client, TABLES);
      await client.send(put('before', 1));
    });
    const filler = disk.fill(0);
    // The journal's last page takes a few more lines; then a write finds no room.
    let refusedAt: number | undefined;
    let refused: unknown;
    await withClient(server, async (client) => {
      for (let n = 0; n < 200 && refusedAt === undefined; n++) {
        refused = await client.send(put(`full${n}`, n)).catch((error: unknown) => error);
        if (refused instanceof Error) refusedAt = n;
      }
    });
    const journal = readFileSync(join(dir, JOURNAL_FILE), 'utf8');

    expect(refusedAt).toBeDefined();
    expect((refused as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(500);
    expect(await read(server, `full${refusedAt}`)).toBeUndefined();
    if (refusedAt! > 0) expect(await read(server, `full${refusedAt! - 1}`)).toBe(String(refusedAt! - 1));
    expect(await read(server, 'before')).toBe('1');
    expect(journal.endsWith('\n')).toBe(true);
    expect(
      journal
        .split('\n')
        .filter(Boolean)
        .every((line) => JSON.parse(line)),
    ).toBe(true);
    // Restarted on the full disk: no room to compact, so the journal goes on as it is.
    await server.dispose();
    servers.length = 0;
    server = await started(dir, { compactBytes: 1024 });
    expect(await read(server, 'before')).toBe('1');
    rmSync(filler);
    await withClient(server, (client) => client.send(put('after', 3)));
    expect(await read(server, 'after')).toBe('3');
  });
});

describe('a data directory of an earlier version (dynalite on LevelDB)', () => {
  it('is read once into the journal, and its LevelDB files removed', async () => {
    const dir = directory();
    // Written as the earlier version wrote it: dynalite on LevelDB, in a process of its own (this worker's
    // dynalite may carry the layer's hooks, installed by an earlier suite).
    const script = `
      import dynalite from 'dynalite';
      import { PutItemCommand } from '@aws-sdk/client-dynamodb';
      import { createTables, dynamoClient } from './test/helpers/aws.ts';
      const before = dynalite({ path: ${JSON.stringify(dir)}, createTableMs: 0 });
      await new Promise((resolve) => before.listen(0, '127.0.0.1', resolve));
      const client = dynamoClient({ endpoint: 'http://127.0.0.1:' + before.address().port });
      await createTables(client, ${JSON.stringify(TABLES)});
      await client.send(new PutItemCommand({ TableName: '${TABLES.countersTable}', Item: { pk: { S: 'from-leveldb' }, n: { N: '7' } } }));
      client.destroy();
      await new Promise((resolve) => before.close(resolve));`;
    const writer = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: PACKAGE,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const [code] = await once(writer, 'exit');
    expect(code, 'the earlier version wrote its data directory').toBe(0);
    expect(readdirSync(dir)).toContain('CURRENT');

    const server = await started(dir);
    expect(await read(server, 'from-leveldb')).toBe('7');
    expect(readdirSync(dir).sort()).toEqual([JOURNAL_FILE]);
  });
});
