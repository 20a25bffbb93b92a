/**
 * Why a publish failed, in the terms of what the user can do about it. A publish never leaves readers on a
 * half-written version, so "run it again" is always safe, but it only helps for faults that pass (network,
 * timeouts, throttling, a busy server); for refused credentials, a missing bucket or a full disk the message
 * must name what to change instead.
 */

export type FailureKind =
  | 'transient'
  | 'unreachable'
  | 'credentials'
  | 'permission'
  | 'target'
  | 'server'
  | 'local'
  | 'unknown';

export interface FailureAdvice {
  kind: FailureKind;
  /** Whether running the same build again, unchanged, can complete the publish. */
  rerun: boolean;
  /** One sentence (or two) on what to do; no secrets, no stack. */
  advice: string;
}

/** What the publish was writing to, for the advice. */
export interface FailureTarget {
  /** `s3://bucket/prefix/` or a directory. */
  description: string;
  /** The `--endpoint`, when one was given. */
  endpoint?: string | undefined;
  /** How to say "do it again" (default `run the same build again`; `npm start` says `start again`). */
  again?: string;
}

interface ErrorShape {
  name?: string;
  code?: string;
  Code?: string;
  message?: string;
  cause?: unknown;
  $metadata?: { httpStatusCode?: number; attempts?: number };
}

/** The error and its causes, outermost first (DependencyError wraps the SDK's or the file system's error). */
function chain(error: unknown): ErrorShape[] {
  const errors: ErrorShape[] = [];
  let current = error;
  while (current && typeof current === 'object' && errors.length < 8) {
    errors.push(current as ErrorShape);
    current = (current as ErrorShape).cause;
  }
  return errors;
}

// S3 error codes and Node/SDK error codes, by what the user can do. Sources: the S3 error-code list and
// the SDK's retry classification (throttling and transient codes).
const CREDENTIALS = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidToken',
  'TokenRefreshRequired',
  'CredentialsProviderError',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
]);
const PERMISSION = new Set(['AccessDenied', 'AllAccessDisabled', 'AccountProblem', 'InvalidObjectState']);
const TARGET = new Set([
  'NoSuchBucket',
  'InvalidBucketName',
  'PermanentRedirect',
  'AuthorizationHeaderMalformed',
  'IllegalLocationConstraintException',
]);
const THROTTLING = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
  'ProvisionedThroughputExceededException',
  'ServiceUnavailable',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'AbortError',
]);
const NETWORK = new Set([
  'ECONNRESET',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ECONNABORTED',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND']);
const LOCAL: Record<string, string> = {
  EACCES: 'no permission to write there: fix the directory’s owner or mode, or choose another --out',
  EPERM: 'no permission to write there: fix the directory’s owner or mode, or choose another --out',
  EROFS: 'the file system is read-only: choose another --out',
  ENOSPC: 'the disk is full: free space (or choose another --out), then try again',
  EDQUOT: 'the disk quota is exhausted: free space, then try again',
  ENOTDIR: 'a file stands where a directory must be: check --out',
  EISDIR: 'a directory stands where a file must be: check --out',
};

const attemptsOf = (errors: readonly ErrorShape[]) =>
  errors.map((e) => e.$metadata?.attempts).find((n) => n !== undefined);

/**
 * Classify a publish failure and say what to do.
 * @example
 * explainPublishFailure(
 *   new DependencyError('objects', 's3 list o/ failed', { cause: { name: 'NoSuchBucket' } }),
 *   { description: 's3://catalogue/', endpoint: 'http://127.0.0.1:4569' },
 * )
 * // → { kind: 'target', rerun: false, advice: 'the bucket of s3://catalogue/ does not exist at http://…' }
 */
export function explainPublishFailure(error: unknown, target: FailureTarget): FailureAdvice {
  const errors = chain(error);
  const names = new Set(errors.flatMap((e) => [e.name, e.code, e.Code].filter((n) => n !== undefined)));
  const signs: Signs = {
    names,
    status: errors.map((e) => e.$metadata?.httpStatusCode).find((s) => s !== undefined),
    has: (set) => [...names].some((name) => set.has(name)),
  };
  const attempts = attemptsOf(errors);
  const tries = attempts && attempts > 1 ? ` on all ${attempts} attempts` : '';
  const again = target.again ?? 'run the same build again';
  const where = target.endpoint ?? target.description;
  const { status, has } = signs;
  const misconfigured = setupAdvice(signs, target);
  if (misconfigured) return misconfigured;
  const local = Object.keys(LOCAL).find((code) => names.has(code));
  if (local) return { kind: 'local', rerun: false, advice: LOCAL[local]! };
  if (has(THROTTLING) || has(NETWORK) || (status !== undefined && [429, 502, 503, 504].includes(status))) {
    return {
      kind: 'transient',
      rerun: true,
      advice:
        `a temporary fault (network, timeout or throttling)${tries}: ${again}; it uploads ` +
        'only what is still missing (if it keeps happening, lower --concurrency)',
    };
  }
  if (status !== undefined && status >= 500) {
    return {
      kind: 'server',
      rerun: false,
      advice:
        `the storage server failed${tries} with ${status}${names.has('InternalError') ? ' InternalError' : ''}: ` +
        `a fault of the server at ${where}, not of the snapshot, and a re-run will most likely fail the ` +
        'same way: check that server (its log, version, disk) before trying again',
    };
  }
  return {
    kind: 'unknown',
    rerun: true,
    advice: `${again} to complete the publish; if it fails the same way, the message above names the failing call`,
  };
}

/** What a failure's errors show: their names and codes, the HTTP status, and whether one is of a set. */
interface Signs {
  names: ReadonlySet<string>;
  status: number | undefined;
  has: (set: ReadonlySet<string>) => boolean;
}

/** The advice for a failure of the set-up (credentials, permissions, the bucket, the endpoint), if it is one. */
function setupAdvice({ names, status, has }: Signs, target: FailureTarget): FailureAdvice | undefined {
  const where = target.endpoint ?? target.description;
  if (has(CREDENTIALS)) {
    return {
      kind: 'credentials',
      rerun: false,
      advice:
        `the storage refused or could not find the credentials: check AWS_PROFILE / AWS_ACCESS_KEY_ID / ` +
        `AWS_SESSION_TOKEN (expired SSO or session tokens: sign in again), then try again`,
    };
  }
  if (has(PERMISSION) || status === 403) {
    return {
      kind: 'permission',
      rerun: false,
      advice:
        `access denied on ${target.description}: the identity needs s3:ListBucket on the bucket and ` +
        `s3:GetObject, s3:PutObject, s3:DeleteObject on the prefix (the stack's publisher role has exactly ` +
        `these); check --out and the role, then try again`,
    };
  }
  if (has(TARGET) || status === 301) {
    return {
      kind: 'target',
      rerun: false,
      advice: names.has('NoSuchBucket')
        ? `the bucket of ${target.description} does not exist at ${where}: check --out (and --endpoint), ` +
          'or create the bucket (the CDK stack does), then try again'
        : `the bucket of ${target.description} is not reachable as addressed: check the bucket name and ` +
          'AWS_REGION (the bucket may live in another region), then try again',
    };
  }
  if (has(UNREACHABLE)) {
    return {
      kind: 'unreachable',
      rerun: false,
      advice: names.has('ENOTFOUND')
        ? `the host of ${where} does not resolve: check --endpoint (or AWS_REGION) and the network`
        : `nothing answers at ${where}: check --endpoint and that the server is running ` +
          '(`npm start` prints the endpoint of its S3 server), then try again',
    };
  }
  return undefined;
}
