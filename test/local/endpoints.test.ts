/** The recorded local endpoints of a data directory (local/endpoints.ts). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ENDPOINTS_FILE, readEndpoints, recordEndpoint, recordedPort } from '../../local/endpoints.js';

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
