/**
 * The local stack's data directory, the endpoints and the running stack recorded there, and how a command given no
 * target finds a running npm start (aws/local-stack.ts): none recorded, recorded but gone (its server does not
 * answer), running.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ENDPOINTS_FILE,
  findLocalStack,
  forgetLocalStack,
  type LocalStackRecord,
  localDataDirectory,
  readEndpoints,
  readLocalStack,
  recordEndpoint,
  recordedPort,
  recordLocalStack,
  STACK_FILE,
} from '../../aws/local-stack.js';

const directory = mkdtempSync(join(tmpdir(), 'cat-endpoints-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('recorded endpoints', () => {
  it('are none until recorded, then kept per service', () => {
    expect(readEndpoints(directory)).toEqual({});
    recordEndpoint(directory, 's3', 'http://127.0.0.1:40001');
    recordEndpoint(directory, 'dynamodb', 'http://127.0.0.1:40002');
    recordEndpoint(directory, 's3', 'http://127.0.0.1:40003');
    expect(readEndpoints(directory)).toEqual({
      s3: 'http://127.0.0.1:40003',
      dynamodb: 'http://127.0.0.1:40002',
    });
  });

  it('ignore what is not a loopback endpoint of ours (a record edited by hand, a broken file)', () => {
    writeFileSync(
      join(directory, ENDPOINTS_FILE),
      JSON.stringify({ s3: 'http://example.com:4568', dynamodb: 'http://127.0.0.1:99999' }),
    );
    expect(readEndpoints(directory)).toEqual({});
    writeFileSync(join(directory, ENDPOINTS_FILE), '{"s3": ');
    expect(readEndpoints(directory)).toEqual({});
  });

  it('give their port', () => {
    expect(recordedPort('http://127.0.0.1:40123')).toBe(40123);
    for (const other of [undefined, 'http://127.0.0.1:0', 'https://127.0.0.1:443', 'http://127.0.0.1:4568/x'])
      expect(recordedPort(other)).toBeUndefined();
  });
});

describe('the data directory', () => {
  it('is the checkout’s .local unless CATALOGUE_LOCAL_DIR names another (relative to the working directory)', () => {
    expect(localDataDirectory({}, '/src/catalogue-read-api')).toBe('/src/catalogue-read-api/.local');
    expect(localDataDirectory({ CATALOGUE_LOCAL_DIR: '' }, '/src/x')).toBe('/src/x/.local');
    expect(localDataDirectory({ CATALOGUE_LOCAL_DIR: '/tmp/other' }, '/src/x')).toBe('/tmp/other');
    expect(localDataDirectory({ CATALOGUE_LOCAL_DIR: 'other' }, '/src/x')).toBe(join(process.cwd(), 'other'));
  });
});

/** A loopback port that accepts connections (and says nothing), for the probe. */
async function listening(): Promise<{ server: Server; endpoint: string }> {
  const server = createServer((socket) => socket.on('error', () => {}));
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as { port: number };
  return { server, endpoint: `http://127.0.0.1:${port}` };
}

/** A loopback port nothing listens on (taken, then released). */
async function closedEndpoint(): Promise<string> {
  const { server, endpoint } = await listening();
  await new Promise((done) => server.close(done));
  return endpoint;
}

const record = (s3: string, dynamodb: string): LocalStackRecord => ({
  pid: process.pid,
  s3,
  bucket: 'catalogue',
  prefix: '',
  dynamodb,
  keysTable: 'catalogue-keys',
  countersTable: 'catalogue-counters',
  api: 'http://127.0.0.1:8787/v1',
});

describe('the running npm start', () => {
  const root = mkdtempSync(join(tmpdir(), 'cat-stack-'));
  const data = join(root, '.local');
  mkdirSync(data);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('is none where no npm start recorded one, or its record is unreadable', async () => {
    expect(await findLocalStack({}, root, 's3')).toEqual({
      ok: false,
      directory: data,
      problem: `no npm start is running on ${data} (none has recorded one there)`,
    });
    writeFileSync(join(data, STACK_FILE), '{"pid": 1, "s3": ');
    expect(readLocalStack(data)).toBeUndefined();
    writeFileSync(join(data, STACK_FILE), JSON.stringify({ ...record('x', 'y'), bucket: 3 }));
    expect(readLocalStack(data)).toBeUndefined();
  });

  it('is gone when the server the command needs does not answer, and says which', async () => {
    const s3 = await closedEndpoint();
    const { server, endpoint: dynamodb } = await listening();
    try {
      recordLocalStack(data, record(s3, dynamodb));

      expect(await findLocalStack({}, root, 's3')).toEqual({
        ok: false,
        directory: data,
        problem: `npm start is not running on ${data} (its S3 at ${s3} does not answer)`,
      });
      expect(await findLocalStack({}, root, 'dynamodb')).toMatchObject({ ok: true, stack: { dynamodb } });
    } finally {
      server.close();
    }
  });

  it('is found running, in CATALOGUE_LOCAL_DIR when it names another directory', async () => {
    const { server, endpoint } = await listening();
    const other = join(root, 'other');
    mkdirSync(other);
    try {
      recordLocalStack(other, { ...record(endpoint, endpoint), bucket: 'mine', prefix: 'v1/' });

      const found = await findLocalStack({ CATALOGUE_LOCAL_DIR: other }, '/elsewhere', 's3');

      expect(found).toEqual({
        ok: true,
        directory: other,
        stack: { ...record(endpoint, endpoint), bucket: 'mine', prefix: 'v1/' },
      });
    } finally {
      server.close();
    }
  });

  it('is forgotten by the npm start that recorded it, and only by that one', () => {
    recordLocalStack(data, { ...record('http://127.0.0.1:1', 'http://127.0.0.1:2'), pid: 1 });
    forgetLocalStack(data, process.pid);
    expect(readLocalStack(data)?.pid).toBe(1);
    forgetLocalStack(data, 1);
    expect(readLocalStack(data)).toBeUndefined();
  });
});
