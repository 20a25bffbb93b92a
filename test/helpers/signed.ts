/**
 * Requests to the admin API as a Node.js application sends them: signed with AWS Signature Version 4
 * (service `lambda`) by `@smithy/signature-v4`, the AWS SDK's own signer, then sent as signed.
 */
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { request } from 'undici';

export interface Signer {
  url: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

export interface SignedAnswer {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  // The answer as parsed JSON: the tests read into it freely (its shape is checked against the OpenAPI document).
  // biome-ignore lint/suspicious/noExplicitAny: a test's view of a checked JSON body
  json: { data?: any; error?: any; page?: any; request_id?: string };
}

/**
 * Send `method path` (relative to `/v1`, with its query) signed; `options.sign: false` sends it unsigned,
 * `signingDate` and `credentials` sign it as someone else or at another time.
 */
export async function signedRequest(
  admin: Signer,
  method: string,
  path: string,
  options: {
    body?: unknown;
    raw?: string;
    headers?: Record<string, string>;
    sign?: boolean;
    signingDate?: Date;
    credentials?: Signer['credentials'];
    /** Changes the body after signing (a request tampered with on its way). */
    tamper?: string;
  } = {},
): Promise<SignedAnswer> {
  const url = new URL(`${admin.url}${path}`);
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const headers: Record<string, string> = {
    host: url.host,
    ...(body !== undefined && { 'content-type': 'application/json' }),
    ...options.headers,
  };
  // The query as SigV4 reads the one sent: percent-escapes decoded, a raw `+` kept a `+` (as botocore signs it;
  // URLSearchParams would read it as a space, and sign another query than the one sent).
  const query: Record<string, string> = {};
  for (const part of url.search.slice(1).split('&').filter(Boolean)) {
    const at = part.indexOf('=');
    const decode = (text: string) => {
      try {
        return decodeURIComponent(text);
      } catch {
        return text;
      }
    };
    query[decode(at < 0 ? part : part.slice(0, at))] = at < 0 ? '' : decode(part.slice(at + 1));
  }
  let signed = headers;
  if (options.sign !== false) {
    const signer = new SignatureV4({
      service: 'lambda',
      region: admin.region,
      credentials: options.credentials ?? admin.credentials,
      sha256: Sha256,
    });
    signed = (
      await signer.sign(
        {
          method,
          protocol: url.protocol,
          hostname: url.hostname,
          port: Number(url.port),
          path: url.pathname,
          query,
          headers,
          ...(body !== undefined && { body }),
        },
        options.signingDate ? { signingDate: options.signingDate } : {},
      )
    ).headers as Record<string, string>;
  }
  const response = await request(url, {
    method: method as 'GET',
    headers: signed,
    ...((options.tamper ?? body) !== undefined && { body: options.tamper ?? body }),
  });
  const text = await response.body.text();
  let json = {};
  try {
    json = JSON.parse(text);
  } catch {
    // asserted by the caller
  }
  return {
    method,
    path: `${new URL(admin.url).pathname}${path}`,
    status: response.statusCode,
    headers: response.headers,
    body: text,
    json,
  };
}
