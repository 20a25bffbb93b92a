/**
 * The paging example of the API reference (docs/api.md), run as written (bash, curl, node)
 * against a loopback server: it must set CURSOR from the first answer and send it back on the second request.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';

const API_REFERENCE = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'api.md'), 'utf8');
const KEY = `pk_live_${'R'.repeat(22)}`;
const seen: { url: string; authorization: string | undefined }[] = [];
const server = createServer((request, response) => {
  seen.push({ url: request.url ?? '', authorization: request.headers.authorization });
  const next = request.url?.includes('cursor=') ? null : 'AUf_Cursor-1';
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify({ data: [{ id: 101, name: 'A-110-1', hp: 8 }], page: { next_cursor: next } }));
});
let base: string;

beforeAll(async () => {
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => {
  server.close();
});

it('the paging example sets CURSOR from the first answer and sends it back', async () => {
  // Prepare: the lines from "CURSOR=$(" to the curl that uses $CURSOR, pointed at the test server.
  const match = /^CURSOR=\$\(curl[\s\S]*?\n(?!\s).*\$CURSOR.*$/m.exec(API_REFERENCE);
  expect(match, 'docs/api.md paging example').not.toBeNull();
  const script = match![0].replaceAll('http://127.0.0.1:8787/v1', base);

  // Act
  await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
    env: { PATH: process.env.PATH, CATALOGUE_KEY: KEY },
  });

  // Assess
  expect(seen.map((request) => request.url)).toEqual([
    '/v1/modules?limit=2&fields=name,hp',
    '/v1/modules?limit=2&fields=name,hp&cursor=AUf_Cursor-1',
  ]);
  expect(seen.every((request) => request.authorization === `Bearer ${KEY}`)).toBe(true);
});
