/**
 * The peer's database: a throwaway PostgreSQL cluster (Debian's `postgresql` package: `apt-get install -y
 * postgresql`) in a temporary directory, on an ephemeral loopback port, run by a non-root user when the bench
 * runs as root (initdb refuses root), stopped and removed after; and the bench catalogue loaded into it.
 * `synchronous_commit=off`: a commit does not wait for its WAL to reach the disk — the durability of the local
 * DynamoDB's journal (written, not synced), so that both sides do the same kind of work per request.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Snapshot } from '../builder/snapshot/snapshot.js';
import { errorMessage } from '../store/errors.js';
import { nameCollator } from '../store/schema.js';
import { hashApiKey } from '../tables/keys.js';
import { trackChild } from './children.js';

export const DB_USER = 'bench';
const DATABASE = 'catalogue';

export interface Postgres {
  port: number;
  /** The server's own process (its backends are its children: CPU is measured over the tree). */
  pid: number;
  version: string;
  stop(): Promise<void>;
}

/** Where initdb and postgres are: on PATH, else Debian's /usr/lib/postgresql/<major>/bin (newest first). */
export function postgresBin(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))) return dir;
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return majors.map((major) => join(root, major, 'bin')).find((dir) => existsSync(join(dir, 'initdb')));
}

/** The user to run the cluster as: ourselves, or `postgres` (else `nobody`) when we are root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const user of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
      return { uid, gid };
    } catch {
      // no such user
    }
  }
  throw new Error('running as root and no postgres or nobody user to run PostgreSQL as');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function connectWhenReady(
  port: number,
  server: ChildProcess,
  database = 'postgres',
): Promise<pg.Client> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`postgres exited with ${server.exitCode}`);
    const client = new pg.Client({ host: '127.0.0.1', port, user: DB_USER, database });
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** initdb into a temporary directory and start postgres on a free loopback port, with database `catalogue`. */
export async function startPostgres(bin: string): Promise<Postgres> {
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'bench-pg-'));
  const data = join(dir, 'data');
  chmodSync(dir, 0o755);
  if (user) chownSync(dir, user.uid, user.gid);
  const options = { ...(user ?? {}), cwd: dir };
  execFileSync(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', DB_USER, '-E', 'UTF8', '--no-sync'], {
    ...options,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const port = await freePort();
  const server = spawn(
    join(bin, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'synchronous_commit=off',
      '-c',
      'max_connections=30',
    ],
    { ...options, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  trackChild(server);
  let log = '';
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    log = (log + chunk).slice(-4000);
  });
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) {
      const exited = once(server, 'exit');
      server.kill('SIGINT'); // fast shutdown
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const admin = await connectWhenReady(port, server);
    const version = String((await admin.query('SHOW server_version')).rows[0].server_version);
    await admin.query(`CREATE DATABASE ${DATABASE}`);
    await admin.end();
    return { port, pid: server.pid!, version, stop };
  } catch (error) {
    await stop();
    throw new Error(`PostgreSQL did not start: ${errorMessage(error)}\n${log}`);
  }
}

/** Positions of `records` in the API's name order (natural, case- and accent-insensitive, ties by id). */
function nameRanks(records: readonly { id: number; name: string }[]): Map<number, number> {
  const sorted = [...records].sort((a, b) => nameCollator.compare(a.name, b.name) || a.id - b.id);
  return new Map(sorted.map((record, rank) => [record.id, rank]));
}

const SCHEMA = `
CREATE TABLE modules (id int PRIMARY KEY, name text NOT NULL, manufacturer_id int NOT NULL, hp int NOT NULL,
  standard int NOT NULL, depth_mm double precision, power_12v_ma int, power_m12v_ma int, power_5v_ma int,
  description text, name_rank int NOT NULL, tag_ids int[] NOT NULL, ins json NOT NULL, outs json NOT NULL,
  tags json NOT NULL, panels json NOT NULL);
CREATE TABLE manufacturers (id int PRIMARY KEY, name text NOT NULL, country text, name_rank int NOT NULL);
CREATE TABLE standards (id int PRIMARY KEY, name text NOT NULL, height_mm double precision, name_rank int NOT NULL);
CREATE TABLE tags (id int PRIMARY KEY, name text NOT NULL, type text, name_rank int NOT NULL);
CREATE TABLE api_keys (key_hash text PRIMARY KEY, key_id text NOT NULL, limit_minute bigint NOT NULL, limit_month bigint NOT NULL);
CREATE TABLE quota (key_id text PRIMARY KEY, minute bigint NOT NULL, minute_count bigint NOT NULL, month text NOT NULL, month_count bigint NOT NULL);`;

const INDEXES = `
CREATE INDEX ON modules (name_rank, id);
CREATE INDEX ON modules (manufacturer_id, id);
CREATE INDEX ON modules (manufacturer_id, name_rank, id);
CREATE INDEX ON modules (hp, id);
CREATE INDEX ON modules (hp, name_rank, id);
CREATE INDEX ON modules (standard, id);
CREATE INDEX ON modules USING gin (tag_ids);
CREATE INDEX ON manufacturers (name_rank, id);
CREATE INDEX ON standards (name_rank, id);
CREATE INDEX ON tags (name_rank, id);
ANALYZE;`;

/** Insert `rows` into `table` in batches, each one statement over a JSON array. */
async function insert(client: pg.Client, table: string, rows: readonly object[]): Promise<void> {
  for (let at = 0; at < rows.length; at += 2000) {
    await client.query(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(null::${table}, $1)`, [
      JSON.stringify(rows.slice(at, at + 2000)),
    ]);
  }
}

/** The snapshot as tables, and `key` with `limits` (its quota row at zero). */
export async function loadCatalogue(
  postgres: Postgres,
  snapshot: Snapshot,
  key: { key: string; limits: { minute: number; month: number } },
): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port: postgres.port, user: DB_USER, database: DATABASE });
  await client.connect();
  try {
    await client.query(SCHEMA);
    const tagById = new Map(
      snapshot.tags.map((tag) => [tag.id, { id: tag.id, name: tag.name, type: tag.type }]),
    );
    const moduleRank = nameRanks(snapshot.modules);
    await insert(
      client,
      'modules',
      snapshot.modules.map(({ tag_ids, ...module }) => ({
        ...module,
        tag_ids,
        tags: [...tag_ids].sort((a, b) => a - b).map((id) => tagById.get(id)),
        name_rank: moduleRank.get(module.id),
      })),
    );
    for (const [table, records] of [
      ['manufacturers', snapshot.manufacturers],
      ['standards', snapshot.standards],
      ['tags', snapshot.tags],
    ] as const) {
      const ranks = nameRanks(records);
      await insert(
        client,
        table,
        records.map((record) => ({ ...record, name_rank: ranks.get(record.id) })),
      );
    }
    await client.query('INSERT INTO api_keys VALUES ($1, $2, $3, $4)', [
      hashApiKey(key.key),
      'key_bench',
      key.limits.minute,
      key.limits.month,
    ]);
    await client.query("INSERT INTO quota VALUES ('key_bench', 0, 0, '', 0)");
    await client.query(INDEXES);
  } finally {
    await client.end();
  }
}
