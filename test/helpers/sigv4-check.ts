/**
 * s3rver and dynalite accept any SigV4 signature, so they cannot tell whether the lean clients sign what they
 * send. This loopback server can: it rebuilds the request it received (method, path, the signed headers as
 * received, body), signs it again with the same credentials and time, and compares the signatures. A
 * mismatch means the bytes on the wire are not the bytes that were signed (Host, path encoding, a header
 * added after signing…), which AWS would refuse with 403 SignatureDoesNotMatch.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';

export const CHECK_CREDENTIALS = { accessKeyId: 'AKIDCHECK', secretAccessKey: 'check-secret' };

export interface CheckedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** Why the signature does not verify; undefined when it does. */
  problem: string | undefined;
}

export interface SigV4CheckServer {
  endpoint: string;
  requests: CheckedRequest[];
  close(): Promise<void>;
}

async function verify(request: IncomingMessage, body: string): Promise<string | undefined> {
  const authorization = request.headers.authorization ?? '';
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  if (!match) return `malformed Authorization: ${authorization}`;
  const [, accessKeyId, , region, service, signedHeaders, signature] = match;
  if (accessKeyId !== CHECK_CREDENTIALS.accessKeyId) return `unexpected access key ${accessKeyId}`;
  const names = signedHeaders!.split(';');
  if (!names.includes('host')) return 'Host is not signed';
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = request.headers[name];
    if (typeof value !== 'string') return `signed header ${name} was not received`;
    headers[name] = value;
  }
  const amzDate = headers['x-amz-date'];
  if (!amzDate) return 'x-amz-date is not signed';
  const signingDate = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const [host, port] = headers.host!.split(':');
  const signer = new SignatureV4({
    service: service!,
    region: region!,
    credentials: CHECK_CREDENTIALS,
    sha256: Sha256,
    // S3 signs the path as sent; every other service signs it normalised and encoded again.
    uriEscapePath: service !== 's3',
  });
  const again = await signer.sign(
    {
      method: request.method!,
      protocol: 'http:',
      hostname: host!,
      ...(port ? { port: Number(port) } : {}),
      path: request.url!,
      query: {},
      headers,
      body: body === '' ? undefined : body,
    },
    { signingDate },
  );
  const expected = /Signature=([0-9a-f]{64})$/.exec(again.headers.authorization ?? '')?.[1];
  return expected === signature ? undefined : 'signature does not match the request as received';
}

/**
 * @example
 * const check = await startSigV4Check((request, response) => response.end('{}'));
 * // … point a client at check.endpoint with CHECK_CREDENTIALS, then:
 * expect(check.requests.map((r) => r.problem)).toEqual([undefined]);
 */
export async function startSigV4Check(
  answer: (request: CheckedRequest, response: ServerResponse) => void,
): Promise<SigV4CheckServer> {
  const requests: CheckedRequest[] = [];
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const checked: CheckedRequest = {
      method: request.method!,
      path: request.url!,
      headers: request.headers,
      body,
      problem: await verify(request, body),
    };
    requests.push(checked);
    answer(checked, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
