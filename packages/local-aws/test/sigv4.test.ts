/**
 * The SigV4 check of a function URL (src/sigv4.ts) behind a node:http server, against requests signed
 * by another language's AWS SDK (Debian's python3-botocore, as the admin guide's Python sample signs) and
 * hand-built hostile ones — refused as AWS refuses them (issue 47): a SignedHeaders list naming a header twice
 * (`host;host`) or out of order, and a session token with the long-term local credentials, signed or not.
 * Everything else npm start's admin API meets (the check behind the product's own adapter) is in the product's
 * test/local/admin.test.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sigV4Check } from '../src/sigv4.js';

const PYTHON = '/usr/bin/python3';
const CREDENTIALS = {
  accessKeyId: 'LOCALTESTKEY0000001',
  secretAccessKey: 'a-local-secret-of-forty-characters-long!',
};
const REGION = 'eu-west-1';
const PRINCIPAL = { arn: 'arn:aws:iam::000000000000:user/local' };

let server: Server;
let base: string;

beforeAll(async () => {
  const check = sigV4Check({
    credentials: CREDENTIALS,
    region: REGION,
    service: 'lambda',
    principal: PRINCIPAL,
  });
  // The server's part is only to say what the check decided of the request as received.
  server = createServer(async (incoming, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const { method = 'GET', url = '/', headers } = incoming;
    const checked = await check({ method, url, headers, body: Buffer.concat(chunks) });
    response.writeHead('principal' in checked ? 200 : 403, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ refusal: 'refusal' in checked ? checked.refusal : null }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
});

/** A request signed by botocore's SigV4Auth, sent with urllib: its status and the check's refusal. */
async function fromPython(options: { path: string; body?: string; token?: string }) {
  const script = `
import json, sys, urllib.request, urllib.error
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
url, key, secret, token, body = sys.argv[1:6]
data = body.encode() if body else None
req = AWSRequest(method="POST" if data else "GET", url=url, data=data,
                 headers={"Content-Type": "application/json"} if data else {})
SigV4Auth(Credentials(key, secret, token or None), "lambda", "${REGION}").add_auth(req)
p = req.prepare()
try:
    r = urllib.request.urlopen(urllib.request.Request(p.url, data=p.body, method=p.method, headers=dict(p.headers)))
    print(json.dumps({"status": r.status, **json.loads(r.read())}))
except urllib.error.HTTPError as e:
    print(json.dumps({"status": e.code, **json.loads(e.read())}))
`;
  const { stdout } = await promisify(execFile)(
    PYTHON,
    [
      '-c',
      script,
      `${base}${options.path}`,
      CREDENTIALS.accessKeyId,
      CREDENTIALS.secretAccessKey,
      options.token ?? '',
      options.body ?? '',
    ],
    { timeout: 30_000 },
  );
  return JSON.parse(stdout) as { status: number; refusal: string | null };
}

/** A request signed by the JavaScript SDK's signer, its headers then changed as `edit` says, and sent. */
async function handBuilt(edit: (headers: Record<string, string>) => Record<string, string>) {
  const url = new URL(`${base}/v1/keys?owner=u1`);
  const signer = new SignatureV4({
    service: 'lambda',
    region: REGION,
    credentials: CREDENTIALS,
    sha256: Sha256,
  });
  const signed = await signer.sign({
    method: 'GET',
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query: { owner: 'u1' },
    headers: { host: url.host },
  });
  const response = await request(url, { headers: edit(signed.headers as Record<string, string>) });
  return { status: response.statusCode, ...((await response.body.json()) as { refusal: string | null }) };
}

const botocore = existsSync(PYTHON)
  ? ''
  : ' (skipped: no /usr/bin/python3; apt-get install python3-botocore, as .ci/run does)';

describe(`requests signed by botocore${botocore}`, () => {
  it.skipIf(botocore !== '')(
    'are taken: a GET with a query (a + written %2B) and a POST with a body',
    async () => {
      expect(await fromPython({ path: '/v1/keys?owner=u1' })).toEqual({ status: 200, refusal: null });
      expect(await fromPython({ path: '/v1/keys?owner=a%2Bb%40c' })).toEqual({ status: 200, refusal: null });
      expect(await fromPython({ path: '/v1/keys', body: '{"owner":"u1","tier":"free"}' })).toEqual({
        status: 200,
        refusal: null,
      });
    },
  );

  it.skipIf(botocore !== '')(
    'are refused with a session token: the local credentials are long-term ones',
    async () => {
      expect(
        await fromPython({ path: '/v1/keys?owner=u1', token: 'FwoGZXIvYXdzEJr//////////token' }),
      ).toEqual({
        status: 403,
        refusal: 'The security token included in the request is invalid.',
      });
    },
  );
});

describe('hand-built requests', () => {
  const withSignedHeaders = (list: string) => (headers: Record<string, string>) => ({
    ...headers,
    authorization: headers.authorization!.replace(/SignedHeaders=[^,]+/, `SignedHeaders=${list}`),
  });

  it('as signed: taken (the control)', async () => {
    expect(await handBuilt((headers) => headers)).toEqual({ status: 200, refusal: null });
  });

  it.each([
    ['a header named twice', 'host;host;x-amz-content-sha256;x-amz-date'],
    ['the signed ones named twice', 'host;x-amz-content-sha256;x-amz-content-sha256;x-amz-date;x-amz-date'],
    ['out of order', 'x-amz-date;x-amz-content-sha256;host'],
  ])('a SignedHeaders list with %s: refused as AWS refuses it', async (_, list) => {
    const signed = await handBuilt((headers) => headers);
    expect(signed.status).toBe(200);
    expect(await handBuilt(withSignedHeaders(list))).toEqual({
      status: 403,
      refusal: 'The request signature we calculated does not match the signature you provided.',
    });
  });

  it('a session token added to a signed request, unsigned: refused', async () => {
    expect(await handBuilt((headers) => ({ ...headers, 'x-amz-security-token': 'token' }))).toEqual({
      status: 403,
      refusal: 'The security token included in the request is invalid.',
    });
  });
});
