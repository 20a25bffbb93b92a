/**
 * The local stack of a checkout (`npm start`), as the commands that reach it without settings find it: its data
 * directory (`CATALOGUE_LOCAL_DIR`, else the checkout's `.local/`) and the local S3 and DynamoDB endpoints it
 * keeps there, in `<data dir>/endpoints.json`. `npm start` writes them (local/own-servers.ts), `npm run
 * catalogue -- upload` reads them; they stay the same across restarts, so the lines `npm start` prints to paste
 * (`export CATALOGUE_S3_ENDPOINT=…`, the key CLI's `DYNAMODB_ENDPOINT=…`) keep working after a restart. The first
 * start on a data directory takes ports the system picks; later starts listen on the recorded ones again, and
 * take new ones (recorded, and said) only when another process holds a recorded port.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
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
