/**
 * The local stack of a checkout (`npm start`), as the commands that reach it without settings find it: its data
 * directory (`CATALOGUE_LOCAL_DIR`, else the checkout's `.local/`), the local S3 and DynamoDB endpoints it
 * keeps there, in `<data dir>/endpoints.json`, and what the running one serves, in `<data dir>/npm-start.json`.
 * `npm start` writes them (local/own-servers.ts, local/start.ts); every command given no target reads them
 * ({@link findLocalStack}: `npm run catalogue -- upload | versions | rollback | unlock`, `npm run keys`). The
 * endpoints stay the same across restarts, so the lines `npm start` prints to paste (`export
 * CATALOGUE_S3_ENDPOINT=…`) keep working after a restart. The first start on a data directory takes ports the
 * system picks; later starts listen on the recorded ones again, and take new ones (recorded, and said) only when
 * another process holds a recorded port.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';

/**
 * The data directory of the checkout at `root`: CATALOGUE_LOCAL_DIR (relative to the working directory), else
 * `<root>/.local`.
 * @example localDataDirectory({}, '/src/catalogue-read-api') // → '/src/catalogue-read-api/.local'
 */
export function localDataDirectory(env: Record<string, string | undefined>, root: string): string {
  return resolve(env.CATALOGUE_LOCAL_DIR || join(root, '.local'));
}

export const ENDPOINTS_FILE = 'endpoints.json';

export type LocalService = 's3' | 'dynamodb';

/** Endpoint URL by service, as recorded (a service never started has none). */
export type Endpoints = Partial<Record<LocalService, string>>;

/** The recorded endpoints, or none when there is no record or it cannot be read (ports are then picked). */
export function readEndpoints(directory: string): Endpoints {
  try {
    const record = JSON.parse(readFileSync(join(directory, ENDPOINTS_FILE), 'utf8')) as Record<
      string,
      unknown
    >;
    const endpoints: Endpoints = {};
    for (const service of ['s3', 'dynamodb'] as const) {
      const value = record[service];
      if (typeof value === 'string' && recordedPort(value) !== undefined) endpoints[service] = value;
    }
    return endpoints;
  } catch {
    return {};
  }
}

/**
 * The port of a recorded loopback endpoint; undefined for anything else (a record edited by hand, another
 * host: then a port is picked again).
 * @example recordedPort('http://127.0.0.1:40123') // → 40123
 */
export function recordedPort(endpoint: string | undefined): number | undefined {
  const port = /^http:\/\/127\.0\.0\.1:(\d{1,5})$/.exec(endpoint ?? '')?.[1];
  const value = Number(port);
  return port !== undefined && value > 0 && value <= 65535 ? value : undefined;
}

/** Record `endpoint` for `service`, keeping the other's (written aside and renamed). */
export function recordEndpoint(directory: string, service: LocalService, endpoint: string): void {
  const endpoints = { ...readEndpoints(directory), [service]: endpoint };
  const file = join(directory, ENDPOINTS_FILE);
  writeFileSync(`${file}.next`, `${JSON.stringify(endpoints, null, 2)}\n`);
  renameSync(`${file}.next`, file);
}

/** What a running `npm start` serves, recorded in its data directory once it is ready (local/start.ts). */
export interface LocalStackRecord {
  /** The process of that `npm start`. */
  pid: number;
  /** Its S3 (its own, or the one S3_ENDPOINT named), and the catalogue's bucket and prefix there ('' or ending in '/'). */
  s3: string;
  bucket: string;
  prefix: string;
  /** Its DynamoDB, and the keys and counters tables. */
  dynamodb: string;
  keysTable: string;
  countersTable: string;
  /** The API's base URL (`http://127.0.0.1:8787/v1`). */
  api: string;
}

export const STACK_FILE = 'npm-start.json';

const RECORD_FIELDS = ['s3', 'bucket', 'prefix', 'dynamodb', 'keysTable', 'countersTable', 'api'] as const;

/** Record what this `npm start` serves (written aside and renamed: a reader never sees half of it). */
export function recordLocalStack(directory: string, record: LocalStackRecord): void {
  const file = join(directory, STACK_FILE);
  writeFileSync(`${file}.next`, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(`${file}.next`, file);
}

/** Remove the record when it is `pid`'s (an `npm start` stopping), leaving another's. */
export function forgetLocalStack(directory: string, pid: number): void {
  if (readLocalStack(directory)?.pid === pid) rmSync(join(directory, STACK_FILE), { force: true });
}

/** The recorded stack, or none when there is no record or it cannot be read. */
export function readLocalStack(directory: string): LocalStackRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(join(directory, STACK_FILE), 'utf8')) as Record<string, unknown>;
    if (!Number.isSafeInteger(record.pid)) return undefined;
    if (!RECORD_FIELDS.every((field) => typeof record[field] === 'string')) return undefined;
    return record as unknown as LocalStackRecord;
  } catch {
    return undefined;
  }
}

/** How long a local server may take to accept a connection before it is taken for gone. */
const PROBE_MS = 2_000;

/** Whether something accepts connections at `endpoint` (an http:// URL) within {@link PROBE_MS}. */
function answers(endpoint: string): Promise<boolean> {
  const url = URL.parse(endpoint);
  if (!url) return Promise.resolve(false);
  return new Promise((settle) => {
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 80) });
    const done = (answered: boolean) => {
      socket.destroy();
      settle(answered);
    };
    socket.setTimeout(PROBE_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export type FoundLocalStack =
  | { ok: true; directory: string; stack: LocalStackRecord }
  | {
      ok: false;
      directory: string;
      /** Why there is none, in words to begin a sentence with: "no npm start has run on …". */
      problem: string;
    };

const SERVICE_NAMES: Record<LocalService, string> = { s3: 'S3', dynamodb: 'DynamoDB' };

/**
 * The `npm start` of the checkout at `root` that a command given no target acts on (the data directory's, as
 * `npm start` itself picks it), running: its record read and the server the command needs (`service`)
 * answering. Otherwise why not, for the command to say with what to do instead (its explicit target).
 * @example const found = await findLocalStack(process.env, '.', 's3'); // → { ok: true, stack: { s3: 'http://127.0.0.1:41234', bucket: 'catalogue', … } }
 */
export async function findLocalStack(
  env: Record<string, string | undefined>,
  root: string,
  service: LocalService,
): Promise<FoundLocalStack> {
  const directory = localDataDirectory(env, root);
  const stack = readLocalStack(directory);
  if (!stack) {
    return {
      ok: false,
      directory,
      problem: `no npm start is running on ${directory} (none has recorded one there)`,
    };
  }
  const endpoint = stack[service];
  if (!(await answers(endpoint))) {
    return {
      ok: false,
      directory,
      problem: `npm start is not running on ${directory} (its ${SERVICE_NAMES[service]} at ${endpoint} does not answer)`,
    };
  }
  return { ok: true, directory, stack };
}
