/** The local stack's data directory and the endpoints recorded there (aws/local-stack.ts). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ENDPOINTS_FILE,
  localDataDirectory,
  readEndpoints,
  recordEndpoint,
  recordedPort,
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
