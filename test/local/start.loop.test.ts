/**
 * The local loop of `npm start` that keeps the publisher's work (docs/publishing.md, "What npm start publishes,
 * and what it keeps"): a published edit survives a restart on the same data directory; a named source is
 * published again only when it changed; a second start on a data directory in use exits non-zero at once with
 * the message, touching nothing, and leaves the first serving; a dead start's lock is taken over. As a server:
 * a port in use is refused before anything is touched, with the fix; killed hard, it leaves no process and no
 * port behind; and the lines it printed to paste stay valid across restarts.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { dynamoClient } from '../../aws/sdk.js';
import { main as catalogueCli, EXIT } from '../../builder/cli.js';
import { portFree } from '../../local/port.js';
import { get, npmStartSuite, publishInto, runToExit, type Started, stop } from '../helpers/npm-start.js';

const FIXTURE = join(import.meta.dirname, '../../fixtures/catalogue');
const { directory: temporaryDirectory, local, start } = npmStartSuite('loop', { published: true });

/**
 * Every file under `directory` with its size and modification time, to show that nothing was touched. The
 * running dynalite's own files are left out: LevelDB compacts in the background whenever it likes; that the
 * first start's database still works is shown by a request with its key.
 */
function snapshotOf(directory: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(directory, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!entry.isFile() || path.startsWith(join(directory, 'dynamodb'))) continue;
    const { size, mtimeMs } = statSync(path);
    files.set(path, `${size}@${mtimeMs}`);
  }
  return files;
}

/** Rename module 101 in the snapshot at `source`. */
function renameModule(source: string, name: string): void {
  const file = join(source, 'modules.json');
  const modules = JSON.parse(readFileSync(file, 'utf8')) as { id: number; name: string }[];
  modules.find((module) => module.id === 101)!.name = name;
  writeFileSync(file, JSON.stringify(modules, null, 2));
}

describe("npm start keeps the publisher's work", () => {
  it('keeps a published edit across a restart on the same data directory', async () => {
    const source = temporaryDirectory('edited');
    cpSync(FIXTURE, source, { recursive: true });
    const first = await start();
    try {
      // Prepare: a publisher edits a copy and publishes it into the running stack.
      renameModule(source, 'A-110-1 (edited)');
      expect(await publishInto(first, source)).toBe(EXIT.ok);
    } finally {
      await stop(first);
    }

    // Act: start again on the same data directory, as a user would (no CATALOGUE_SOURCE).
    const again = await start();
    try {
      // Assess: the edit is served, and npm start says where the version came from.
      const module = await get(`${again.base}/modules/101`, again.freshKey);
      expect(JSON.parse(module.body).data.name).toBe('A-110-1 (edited)');
      expect(again.output()).toMatch(
        /Catalogue: version \S+, published by a publisher over what npm start published/,
      );
      expect(again.output()).not.toContain('rendering and uploading');
    } finally {
      await stop(again);
    }
  }, 240_000);

  it('publishes a named source again only when it changed since it was published there', async () => {
    const source = temporaryDirectory('named');
    cpSync(FIXTURE, source, { recursive: true });
    const env = { CATALOGUE_SOURCE: source, CATALOGUE_LOCAL_DIR: temporaryDirectory('named-local') };
    const names: string[] = [];
    for (const edit of [undefined, undefined, 'A-110-1 (named edit)']) {
      if (edit) renameModule(source, edit);
      const started = await start(env);
      try {
        const module = await get(`${started.base}/modules/101`, started.freshKey);
        names.push(JSON.parse(module.body).data.name);
        names.push(/^(publishing|already current)/m.exec(started.output())?.[1] ?? 'neither');
      } finally {
        await stop(started);
      }
    }
    expect(names).toEqual([
      'A-110-1',
      'publishing',
      'A-110-1',
      'already current',
      'A-110-1 (named edit)',
      'publishing',
    ]);
  }, 240_000);

  it('refuses a second start on a data directory in use, at once, touching nothing, and leaves the first serving', async () => {
    const first = await start();
    try {
      const before = snapshotOf(local);

      // On the same port too, as two plain `npm start`s would be: the directory is what it is told about.
      const second = await runToExit(local, { PORT: new URL(first.base).port });

      expect(second.code).not.toBe(0);
      expect(second.output).toContain(
        `npm start failed: the data directory ${local} is in use by another npm start`,
      );
      expect(second.output).toContain(`process ${first.child.pid}`);
      expect(second.output).not.toMatch(/publishing|ready at|Error: Database is closed| {4}at /);
      // Refused before any server started: well under the few seconds s3rver, dynalite and a publish take.
      expect(second.ms).toBeLessThan(15_000);
      expect(snapshotOf(local)).toEqual(before);
      expect((await get(`${first.base}/modules?limit=1`, first.freshKey)).status).toBe(200);
    } finally {
      await stop(first);
    }
  }, 240_000);

  it('takes over the lock of a start that died without releasing it', async () => {
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.once('exit', resolve));
    writeFileSync(
      join(local, 'npm-start.lock'),
      JSON.stringify({ pid: dead.pid, host: hostname(), since: '' }),
    );

    const started = await start();
    try {
      expect((await get(`${started.base}/tags`, started.freshKey)).status).toBe(200);
    } finally {
      await stop(started);
    }
  }, 240_000);
});

/** The lines a start printed that name its local S3 and DynamoDB: the ones a user pastes and keeps. */
function endpointLines(started: Started) {
  const out = started.output();
  const keys = /^Local S3: \S+ \(bucket \S+\); DynamoDB: (\S+) \(tables (\S+), \S+\)$/m.exec(out);
  const publish = /^ {2}npm run catalogue -- (build .*)$/m.exec(out);
  return {
    s3Export: started.exports.CATALOGUE_S3_ENDPOINT,
    storageLine: keys?.[0],
    keysTable: keys?.[2],
    dynamodbEndpoint: keys?.[1],
    publishLine: publish?.[0],
    publishArgs: publish?.[1]?.split(' '),
  };
}

/** The threads of a running process by name, and its child processes with their command lines (Linux /proc). */
function threadsAndChildren(pid: number): { threads: string[]; children: Map<number, string> } {
  const tasks = readdirSync(`/proc/${pid}/task`);
  const children = new Map<number, string>();
  for (const task of tasks) {
    for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(' ')) {
      if (child)
        children.set(Number(child), readFileSync(`/proc/${child}/cmdline`, 'utf8').replaceAll('\0', ' '));
    }
  }
  return {
    threads: tasks.map((task) => readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim()),
    children,
  };
}

describe('npm start as a server', () => {
  it('refuses a port in use at once, before touching anything, naming the holder and the fix', async () => {
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const port = (squatter.address() as { port: number }).port;
    const fresh = join(temporaryDirectory('port'), 'never-created');
    try {
      const refused = await runToExit(fresh, { PORT: String(port) });

      expect(refused.code).not.toBe(0);
      expect(refused.output).toMatch(
        new RegExp(
          `npm start failed: port ${port} on 127\\.0\\.0\\.1 is in use by process ${process.pid} \\(`,
        ),
      );
      expect(refused.output).toMatch(/start this one on another port: PORT=\d+ npm start/);
      expect(refused.output).not.toMatch(/publishing|ready at| {4}at /);
      expect(existsSync(fresh)).toBe(false);
    } finally {
      squatter.close();
    }
  }, 60_000);

  it('killed hard, leaves no process or port behind; restarted twice, the lines it printed stay valid', async () => {
    // The data directory of the tests above: published already, so no start here publishes.
    const first = await start();
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    let printed: ReturnType<typeof endpointLines>;
    let ports: number[];
    let children: Map<number, string>;
    try {
      printed = endpointLines(first);
      ports = [first.base, printed.s3Export!, printed.dynamodbEndpoint!].map((url) =>
        Number(new URL(url).port),
      );
      // The protocol servers run on a thread of npm start's own process; its only child is tsx's esbuild
      // service (TypeScript transforms), which ends when its pipe to npm start closes.
      const seen = threadsAndChildren(first.child.pid!);
      children = seen.children;
      expect(seen.threads).toContain('local servers');
      for (const command of children.values()) expect(command).toMatch(/esbuild.* --service=/);
    } finally {
      first.child.kill('SIGKILL');
      await exited;
    }
    for (const port of ports) expect(await portFree(port), `port ${port}`).toBe(true);
    for (const child of children.keys()) {
      await vi.waitFor(() => expect(existsSync(`/proc/${child}`), `process ${child}`).toBe(false), {
        timeout: 5_000,
      });
    }

    for (const how of ['after SIGKILL', 'after SIGTERM']) {
      const again = await start();
      try {
        expect(endpointLines(again), how).toEqual(printed);
        // The lines printed by the first start work against this one.
        const tables = dynamoClient({ endpoint: printed.dynamodbEndpoint! });
        try {
          const table = await tables.send(new DescribeTableCommand({ TableName: printed.keysTable! }));
          expect(table.Table?.TableStatus).toBe('ACTIVE');
        } finally {
          tables.destroy();
        }
        if (how === 'after SIGTERM') expect(await publishWith(printed.publishArgs!)).toBe(EXIT.ok);
        expect((await get(`${again.base}/modules/101`, again.freshKey)).status).toBe(200);
      } finally {
        await stop(again);
      }
    }
  }, 240_000);
});

/** Run the catalogue CLI with `args` (a printed hint line's), quietly. */
async function publishWith(args: string[]): Promise<number> {
  const quiet = [
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true),
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true),
  ];
  try {
    return await catalogueCli(args.map((arg) => (arg === 'my-catalogue' ? FIXTURE : arg)));
  } finally {
    for (const spy of quiet) spy.mockRestore();
  }
}
