/**
 * A SigV4 check for the local admin API (npm start), as a Lambda function URL with AWS_IAM checks: the
 * request as received is signed again with the local credentials by `@smithy/signature-v4` (the AWS SDK's own
 * signer) and the signatures compared in constant time. Refused: no or malformed `Authorization`, another
 * access key, another region or service, `x-amz-date` missing, unsigned or more than 5 minutes from the clock,
 * `host` unsigned, and any signature that does not match (a wrong secret, a changed body, path or header).
 * Presigned URLs are not taken. And, as AWS refuses them: a SignedHeaders list that is not each name once, in
 * order (`host;host` — the re-signing would read it as `host`, so a list tampered with on the way would pass),
 * and a session token (`x-amz-security-token`): the local credentials are long-term ones, which take none.
 * The messages are AWS's own (SignatureDoesNotMatch, UnrecognizedClientException).
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';

export interface LocalCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** A request as received: what the check reads of it. */
export interface ReceivedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface SigV4CheckOptions<Principal> {
  credentials: LocalCredentials;
  region: string;
  /** `lambda`: what a function URL is signed for. */
  service: string;
  /** Who a request that verifies is (the caller's own shape). */
  principal: Principal;
  now?: () => Date;
}

/** AWS's answer to a signature that does not verify (SignatureDoesNotMatch). */
const MISMATCH = 'The request signature we calculated does not match the signature you provided.';
/** AWS's answer to an unknown access key, or a session token with long-term credentials (UnrecognizedClientException). */
const INVALID_TOKEN = 'The security token included in the request is invalid.';

/** AWS's bound on a signature's clock skew. */
const MAX_SKEW_MS = 5 * 60_000;

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/\s]+)\/(\d{8})\/([^/\s]+)\/([^/\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;

/** `20261124T153210Z` → a Date, or undefined. */
function amzDate(value: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return undefined;
  const time = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return Number.isNaN(time) ? undefined : new Date(time);
}

/**
 * The query as SigV4 canonicalises it: names and values percent-decoded (a `+` stays a `+`); undefined when
 * an escape is malformed (the admin API answers that 400 itself).
 */
function queryOf(search: string): Record<string, string | string[]> | undefined {
  const query: Record<string, string | string[]> = {};
  try {
    for (const part of search.split('&').filter(Boolean)) {
      const at = part.indexOf('=');
      const name = decodeURIComponent(at < 0 ? part : part.slice(0, at));
      const value = at < 0 ? '' : decodeURIComponent(part.slice(at + 1));
      const known = query[name];
      query[name] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value];
    }
  } catch {
    return undefined;
  }
  return query;
}

/** What a request's Authorization header claims, checked against the request: which headers were signed, when. */
interface Claim {
  names: string[];
  /** The signed headers as received. */
  headers: Record<string, string>;
  signedAt: Date;
  signature: string;
}

/**
 * The claim of `request`'s Authorization header, or why it is refused before any signature is computed:
 * another access key, region or service, `host` or `x-amz-date` unsigned or missing, a date out of the skew,
 * a content hash that is not the body's.
 */
function readClaim(
  request: ReceivedRequest,
  options: SigV4CheckOptions<unknown>,
  now: Date,
): Claim | { refusal: string } {
  const refuse = (refusal: string) => ({ refusal });
  const header = request.headers.authorization;
  if (!header) return refuse('Missing Authorization: sign the request with AWS Signature Version 4.');
  const match = AUTHORIZATION.exec(header);
  if (!match) return refuse('The Authorization header is not an AWS Signature Version 4 one.');
  const [, accessKeyId, day, region, service, signedList, signature] = match;
  if (accessKeyId !== options.credentials.accessKeyId) {
    return refuse('The security token included in the request is invalid (unknown access key).');
  }
  if (region !== options.region || service !== options.service) {
    return refuse(`Credential should be scoped to region ${options.region} and service ${options.service}.`);
  }
  if (request.headers['x-amz-security-token'] !== undefined) return refuse(INVALID_TOKEN);
  const names = signedList!.split(';');
  // Each name once, in order, as the canonical request lists them (anything else signs another request).
  if (names.some((name, i) => i > 0 && name <= names[i - 1]!)) return refuse(MISMATCH);
  if (!names.includes('host')) return refuse('The host header must be signed.');
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = request.headers[name];
    if (value === undefined) return refuse(`The signed header ${name} was not sent.`);
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const signedAt = headers['x-amz-date'] ? amzDate(headers['x-amz-date']) : undefined;
  if (!signedAt) return refuse('x-amz-date must be sent and signed.');
  if (day !== headers['x-amz-date']!.slice(0, 8))
    return refuse('The credential date is not the signing date.');
  if (Math.abs(now.getTime() - signedAt.getTime()) > MAX_SKEW_MS) {
    return refuse(`Signature expired: signed at ${signedAt.toISOString()}, more than 5 minutes from now.`);
  }
  // The signer takes a sent x-amz-content-sha256 as the payload's hash: it must be the body's own.
  const declared = headers['x-amz-content-sha256'];
  if (declared !== undefined && declared !== hash('sha256', request.body, 'hex')) {
    return refuse('The x-amz-content-sha256 header is not the hash of the body sent.');
  }
  return { names, headers, signedAt, signature: signature! };
}

/**
 * @example const check = sigV4Check({ credentials, region: 'us-east-1', service: 'lambda', principal });
 * const outcome = await check(received); // { principal } or { refusal: 'Signature expired …' }
 */
export function sigV4Check<Principal>(
  options: SigV4CheckOptions<Principal>,
): (request: ReceivedRequest) => Promise<{ principal: Principal } | { refusal: string }> {
  const signer = new SignatureV4({
    service: options.service,
    region: options.region,
    credentials: options.credentials,
    sha256: Sha256,
    uriEscapePath: true,
    // Sign exactly the headers the caller signed: add none of its own.
    applyChecksum: false,
  });
  const now = options.now ?? (() => new Date());
  return async (request) => {
    const claim = readClaim(request, options, now());
    if ('refusal' in claim) return claim;
    // The path and query as sent (the signature covers the Host header itself, whatever it holds).
    const queryAt = request.url.indexOf('?');
    const query = queryOf(queryAt < 0 ? '' : request.url.slice(queryAt + 1));
    if (!query) return { refusal: 'The query is not valid percent-encoding.' };
    const again = await signer.sign(
      {
        method: request.method,
        protocol: 'http:',
        hostname: claim.headers.host!,
        path: queryAt < 0 ? request.url : request.url.slice(0, queryAt),
        query,
        headers: claim.headers,
        body: request.body.length === 0 ? undefined : request.body,
      },
      { signingDate: claim.signedAt, signableHeaders: new Set(claim.names) },
    );
    const expected = /Signature=([0-9a-f]{64})$/.exec(String(again.headers.authorization ?? ''))?.[1] ?? '';
    const same =
      expected.length === claim.signature.length &&
      timingSafeEqual(Buffer.from(expected), Buffer.from(claim.signature));
    return same ? { principal: options.principal } : { refusal: MISMATCH };
  };
}
