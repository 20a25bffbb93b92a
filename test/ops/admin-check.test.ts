/**
 * The admin check's one signed call, against a stand-in of the admin API: signed for service `lambda` in the
 * region its URL names; a 404 key_not_found passes, a 403 (credentials refused) and a 404 not_found (a URL that
 * is not the admin API's base) fail, each saying so.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCheck, functionUrlRegion, PROBE_KEY_ID } from '../../ops/admin-check.js';

let answer: { status: number; code: string } = { status: 404, code: 'key_not_found' };
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
const server = createServer((request, response) => {
  seen.push({ url: request.url ?? '', headers: request.headers });
  response.writeHead(answer.status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ error: { code: answer.code, message: answer.code, request_id: 'req_x' } }));
});
let url: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => server.close());

const credentials = () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example-secret' });
const check = () => adminCheck({ url, region: 'eu-west-1', credentials }, Date.now() + 10_000);

describe('adminCheck', () => {
  it("signs one GET of a key nobody has, and passes on the API's 404 key_not_found", async () => {
    answer = { status: 404, code: 'key_not_found' };
    const result = await check();

    expect(result).toMatchObject({
      verdict: 'pass',
      detail: 'signed GET of an unknown key: 404 key_not_found',
    });
    const request = seen.at(-1)!;
    expect(request.url).toBe(`/v1/keys/${PROBE_KEY_ID}`);
    expect(request.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/lambda\/aws4_request, SignedHeaders=/,
    );
  });

  it.each([
    [
      403,
      'forbidden',
      "403 for a signed GET: the caller's credentials are refused (attach the stack's AdminCallerPolicyArn)",
    ],
    [404, 'not_found', `signed GET /v1/keys/${PROBE_KEY_ID}: 404 not_found, expected 404 key_not_found`],
    [
      500,
      'internal_error',
      `signed GET /v1/keys/${PROBE_KEY_ID}: 500 internal_error, expected 404 key_not_found`,
    ],
  ])('fails on %d %s, saying why', async (status, code, detail) => {
    answer = { status, code };
    expect(await check()).toMatchObject({ verdict: 'fail', detail });
  });

  it('is skipped, with the reason, when no admin URL or no credentials were found', async () => {
    expect(await adminCheck({ skip: 'no admin URL' }, Date.now())).toMatchObject({
      verdict: 'skip',
      detail: 'no admin URL',
    });
  });
});

describe('adminCheck without credentials (read access only)', () => {
  const unsigned = () => adminCheck({ url, unsigned: true }, Date.now() + 10_000);

  it("sends one unsigned GET and passes on the function URL's 403", async () => {
    answer = { status: 403, code: 'forbidden' };
    const result = await unsigned();

    expect(result).toMatchObject({
      verdict: 'pass',
      detail: expect.stringMatching(/^unsigned GET refused with 403/),
    });
    expect(seen.at(-1)!.headers.authorization).toBeUndefined();
  });

  it('fails when the admin API answers an unsigned request: it is open to anyone', async () => {
    answer = { status: 404, code: 'key_not_found' };
    expect(await unsigned()).toMatchObject({
      verdict: 'fail',
      detail: `unsigned GET /v1/keys/${PROBE_KEY_ID}: 404 key_not_found, expected the function URL's 403`,
    });
    answer = { status: 200, code: 'ok' };
    expect((await unsigned()).detail).toContain(
      'the admin API answers anyone (its function URL must be AWS_IAM)',
    );
  });
});

describe('functionUrlRegion', () => {
  it('is the region a function URL names, and nothing for another host', () => {
    expect(functionUrlRegion('https://abcdef.lambda-url.eu-west-1.on.aws/v1')).toBe('eu-west-1');
    expect(functionUrlRegion('http://127.0.0.1:8788/v1')).toBeUndefined();
  });
});
