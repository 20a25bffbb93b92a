/**
 * The admin API with the caller's credentials: one read signed with SigV4 (service `lambda`, as the function
 * URL's AWS_IAM auth wants) by the project's signer (aws/signed.ts, `aws4`), for a key id that does not
 * exist. A 404 `key_not_found` (or a 200, should the key exist) says the signature was accepted, the caller
 * may call the API and the function read its table; a 403 says the credentials or their policy are refused,
 * a 404 `not_found` that the URL is not the admin API's base.
 *
 * Without credentials that may call it (a read-only role: `npm run smoke -- --stack` without `--admin`, the
 * scheduled check, the deploy hook) the check is the unsigned read instead: the function URL must refuse it
 * with 403 before the function runs. That says the admin API is there and not open to anyone; nothing more.
 */
import type { CredentialSource } from '../aws/signed.js';
import { SignedClient } from '../aws/signed.js';
import {
  CheckFailure,
  type CheckResult,
  deadlineFetch,
  described,
  errorCode,
  expectThat,
  noAnswer,
  timed,
} from './checks.js';

/** A key id of the admin API's form that no key is given: the check reads nothing real. */
export const PROBE_KEY_ID = 'key_smokecheck';

export interface AdminTarget {
  /** The admin API's base URL, `https://<id>.lambda-url.<region>.on.aws/v1` or npm start's. */
  url: string;
  region: string;
  credentials: CredentialSource;
}

/** The admin API checked without credentials: it must refuse an unsigned request. */
export interface UnsignedAdminTarget {
  url: string;
  unsigned: true;
}

/**
 * The region a function URL's host names (`<id>.lambda-url.<region>.on.aws`), else undefined.
 * @example functionUrlRegion('https://abc.lambda-url.eu-west-1.on.aws/v1') // → 'eu-west-1'
 */
export function functionUrlRegion(url: string): string | undefined {
  return /\.lambda-url\.([a-z0-9-]+)\.on\.aws$/.exec(new URL(url).hostname)?.[1];
}

/** The unsigned read: a 403 from the function URL (its own `{"Message":"Forbidden"}`) passes. */
async function unsignedCheck(target: UnsignedAdminTarget, deadline: number): Promise<string> {
  const url = new URL(target.url);
  const path = `${url.pathname.replace(/\/$/, '')}/keys/${PROBE_KEY_ID}`;
  const answer = await deadlineFetch(deadline)(`${url.origin}${path}`);
  expectThat(answer.status === 403, () => {
    return answer.status < 300
      ? `unsigned GET ${path}: ${described(answer)}: the admin API answers anyone (its function URL must be AWS_IAM)`
      : `unsigned GET ${path}: ${described(answer)}, expected the function URL's 403`;
  });
  return 'unsigned GET refused with 403 (the admin API is up and IAM-protected; --admin signs a call)';
}

/**
 * The admin check; skipped when no admin URL or no credentials were given (`why` says which).
 * @example await adminCheck({ url, region: 'us-east-1', credentials }, Date.now() + 25_000)
 */
export function adminCheck(
  target: AdminTarget | UnsignedAdminTarget | { skip: string },
  deadline: number,
): Promise<CheckResult> {
  return timed('admin API', async () => {
    if ('skip' in target) return target;
    if ('unsigned' in target) return unsignedCheck(target, deadline);
    const url = new URL(target.url);
    const client = new SignedClient({
      origin: url.origin,
      service: 'lambda',
      region: target.region,
      credentials: target.credentials,
      connections: 1,
    });
    const path = `${url.pathname.replace(/\/$/, '')}/keys/${PROBE_KEY_ID}`;
    try {
      const answer = await client
        .request({ method: 'GET', path, signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) })
        .catch((error: unknown) => {
          throw new CheckFailure(`${url.host}: ${noAnswer(error)}`);
        });
      const seen = { status: answer.status, headers: new Headers(), body: answer.body.toString('utf8') };
      expectThat(answer.status !== 403, () => {
        return `403 for a signed GET: the caller's credentials are refused (attach the stack's AdminCallerPolicyArn)`;
      });
      const found = answer.status === 200 || errorCode(seen) === 'key_not_found';
      expectThat(found, () => `signed GET ${path}: ${described(seen)}, expected 404 key_not_found`);
      return `signed GET of an unknown key: ${answer.status} ${errorCode(seen) ?? ''}`.trimEnd();
    } finally {
      await client.close();
    }
  });
}
