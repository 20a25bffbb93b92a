/**
 * The key-administration API as one pure function, `request → response`, like the proxy's core: routes, the
 * body and header checks, the action (admin/actions.ts), the envelope, and one audit line per call with the
 * caller's IAM principal — never a key. The adapters (lambda.ts: a function URL with AWS_IAM; node.ts: npm
 * start, behind a SigV4 check) only translate; who the caller is comes in as `principal`, already verified.
 *
 * Every answer is JSON: `{ "data": …, "request_id": "req_…" }` (a list adds `"page": { "next_cursor" }`), or
 * `{ "error": { "code", "message", "request_id", "details"? } }`. `admin/openapi.json` describes them all.
 */
import { DependencyError, errorText } from '../../store/errors.js';
import { newRequestId } from '../../store/request-id.js';
import { holdsKey, redactKeys } from '../../tables/keys.js';
import type { AdminContext } from '../actions.js';
import * as actions from '../actions.js';
import { findByKey, parseKeyBody, revokeByKey } from '../by-key.js';
import { AdminTableError } from '../dynamo.js';
import {
  ADMIN_ERROR_STATUS,
  type AdminError,
  adminError,
  ContentionError,
  errorEnvelope,
  type FieldProblem,
} from '../errors.js';
import type { Idempotency } from '../idempotency.js';
import { importKeys, parseImportBody } from '../import/api.js';
import { isoSeconds, shownKey } from '../output.js';
import { type KeyUsage, lastUsed } from '../usage.js';
import {
  BOUNDS,
  encodeCursor,
  fingerprint,
  KEY_PROBLEM,
  type Parsed,
  parseEmpty,
  parseExpiry,
  parseIdempotencyKey,
  parseIssue,
  parseKeyId,
  parseLimits,
  parseList,
  parseRoll,
} from '../validate.js';
import { readJsonBody, writtenTwice } from './body.js';

/** Who signed the request, as IAM says (a function URL's `requestContext.authorizer.iam`). */
export interface Principal {
  /** The caller's ARN, e.g. `arn:aws:sts::123456789012:assumed-role/app/i-0abc`. */
  arn: string;
  accountId?: string;
  userId?: string;
}

export interface AdminRequest {
  method: string;
  /** The path without the query: `/v1/keys/key_3fG7xQ2mPa`. */
  path: string;
  /** The raw query string, without `?`. */
  query: string;
  /** Lower-case names. */
  headers: Record<string, string | undefined>;
  body: Buffer;
  /** Who signed it; undefined: refused (403) with `refusal` as the reason. */
  principal: Principal | undefined;
  refusal?: string;
  /** Why the adapter could not read the request at all (answered 400, before anything else but 413). */
  unreadable?: string;
}

export interface AdminResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Action =
  | 'issue'
  | 'list'
  | 'get'
  | 'revoke'
  | 'enable'
  | 'limits'
  | 'expiry'
  | 'roll'
  | 'usage'
  | 'lookup'
  | 'import';

/** One audit line per call (JSON): who, what, on which key and owner, and how it ended. Never a key. */
export interface AuditLine {
  level: 'info' | 'warn' | 'error';
  type: 'admin_audit';
  time: string;
  request_id: string;
  principal: string | null;
  account_id: string | null;
  method: string;
  /** As sent, with anything shaped like a key replaced by `[key redacted]`. */
  path: string;
  /** Where the request held something shaped like a key (`path`, `query`, `body`): refused, never logged. */
  redacted?: string[];
  action: Action | null;
  key_id: string | null;
  owner: string | null;
  /** A roll's new key id (`key_id` is the key rolled). */
  new_key_id?: string;
  /** An import's keys: written, there already as sent, there already but different. */
  keys?: { imported: number; already_there: number; conflicts: number };
  /** `ok`, `created`, `replayed`, `unchanged`, or the error code. */
  outcome: string;
  status: number;
  latency_ms: number;
  /** Why a 5xx happened (the fault's message: a table and what was being done). */
  error?: string;
}

export interface AdminHandlerOptions {
  context: AdminContext;
  /** Where the audit lines go (stdout on Lambda: CloudWatch Logs). */
  log: (line: AuditLine) => void;
}

interface Answer {
  status: number;
  body: unknown;
  outcome: string;
  keyId?: string | undefined;
  /** A roll's new key. */
  newKeyId?: string;
  owner?: string | undefined;
  replayed?: boolean;
  retryAfter?: number;
  /** Where the request held something shaped like a key. */
  redacted?: string[];
  /** An import's counts, for its audit line. */
  keys?: AuditLine['keys'];
}

const ROUTES: { pattern: RegExp; methods: Partial<Record<string, Action>> }[] = [
  { pattern: /^\/v1\/keys$/, methods: { GET: 'list', POST: 'issue' } },
  // The routes that take a key itself, in the body (admin/by-key.ts), and the import of keys already issued.
  { pattern: /^\/v1\/keys\/lookup$/, methods: { POST: 'lookup' } },
  { pattern: /^\/v1\/keys\/revoke$/, methods: { POST: 'revoke' } },
  { pattern: /^\/v1\/keys\/import$/, methods: { POST: 'import' } },
  { pattern: /^\/v1\/keys\/([^/]+)$/, methods: { GET: 'get' } },
  { pattern: /^\/v1\/keys\/([^/]+)\/usage$/, methods: { GET: 'usage' } },
  { pattern: /^\/v1\/keys\/([^/]+)\/(revoke|enable|limits|expiry|roll)$/, methods: { POST: 'revoke' } },
];

/** A request's route: its action and the key id in its path. */
type Routed = { action: Action; keyId?: string };

function route(method: string, path: string): Routed | { allow: string } | undefined {
  for (const { pattern, methods } of ROUTES) {
    const match = pattern.exec(path);
    if (!match) continue;
    let action = methods[method];
    if (!action) return { allow: Object.keys(methods).join(', ') };
    if (match[2]) action = match[2] as Action;
    return { action, ...(match[1] !== undefined && { keyId: match[1] }) };
  }
  return undefined;
}

const errorAnswer = (error: AdminError): Answer => ({
  status: ADMIN_ERROR_STATUS[error.code],
  body: error,
  outcome: error.code,
  ...(error.retryAfter !== undefined && { retryAfter: error.retryAfter }),
});

const invalid = (problems: { field: string; problem: string }[]) =>
  errorAnswer(
    adminError(
      'invalid_request',
      `The request is not valid: ${problems.map((p) => `${p.field} ${p.problem}`).join('; ')}.`,
      problems,
    ),
  );

/**
 * The body as JSON: undefined when empty; an Answer when it cannot be read. `keyAt`: the one field (dotted, as
 * {@link keyShapedField} names it) where a route takes a key itself; anywhere else a key is refused.
 */
function readBody(request: AdminRequest, keyAt?: string): { value: unknown } | Answer {
  if (request.body.length === 0) return { value: undefined };
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    return errorAnswer(
      adminError('unsupported_media_type', 'Send the body as Content-Type: application/json.'),
    );
  }
  const read = readJsonBody(request.body);
  if (!read.ok) return invalid([read.problem]);
  const found = keyShapedField(read.value, '', keyAt);
  if (found !== undefined) {
    return { ...invalid([{ field: found || 'body', problem: KEY_PROBLEM }]), redacted: ['body'] };
  }
  return read.twice === undefined ? { value: read.value } : invalid([writtenTwice(read.twice)]);
}

/**
 * Where in a JSON value something shaped like a key is (escapes such as `\u0070k_live_…` read already): the
 * field's dotted name, '' when it is a name itself (never echoed), undefined when nowhere.
 */
function keyShapedField(value: unknown, at: string, keyAt?: string): string | undefined {
  if (typeof value === 'string') return holdsKey(value) && at !== keyAt ? at : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [name, inner] of Object.entries(value)) {
    if (holdsKey(name)) return '';
    const found = keyShapedField(inner, Array.isArray(value) ? at : at ? `${at}.${name}` : name, keyAt);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Host as HTTP/1.1 has it: a name or an IPv4 or bracketed IPv6 address, an optional port; sent once. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::[0-9]{1,5})?$/;

const percentEncoded = (text: string) => {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
};

/**
 * What makes a request unreadable as it came, or unfit to be logged: a Host header malformed or sent more than
 * once (an adapter joins repeated headers with ", "), a malformed percent-escape in the path or the query, and
 * anything shaped like a key in either (refused before it is logged or echoed: the audit line says so).
 */
function malformed(request: AdminRequest): FieldProblem[] {
  if (request.unreadable) return [{ field: 'request', problem: request.unreadable }];
  const problems: FieldProblem[] = [];
  const host = request.headers.host;
  if (host !== undefined && !HOST.test(host)) {
    const problem = /,/.test(host)
      ? 'must be sent once'
      : 'must be a host name or address, with an optional port';
    problems.push({ field: 'Host', problem });
  }
  for (const [field, text] of [
    ['path', request.path],
    ['query', request.query],
  ] as const) {
    if (holdsKey(text)) problems.push({ field, problem: KEY_PROBLEM });
    else if (!percentEncoded(text)) problems.push({ field, problem: 'holds a malformed percent-escape' });
  }
  return problems;
}

/**
 * The answer given before any action: 413 for a body too large (before its signature can be checked: npm
 * start reads at most the limit; on AWS the function URL has checked the signature already), 400 for a
 * malformed request or one holding something shaped like a key, 403 unless signed by an allowed principal,
 * 404 for no route, 405 for another method. Undefined: the request goes on to its action.
 */
function refusal(request: AdminRequest, found: ReturnType<typeof route>): Answer | undefined {
  if (request.body.length > BOUNDS.bodyBytes) {
    return errorAnswer(adminError('payload_too_large', `The body is over ${BOUNDS.bodyBytes} bytes.`));
  }
  const problems = malformed(request);
  if (problems.length > 0) {
    const redacted = problems.filter((p) => p.problem === KEY_PROBLEM).map((p) => p.field);
    return { ...invalid(problems), ...(redacted.length > 0 && { redacted }) };
  }
  if (!request.principal) {
    const why = request.refusal ?? 'Sign the request with AWS Signature Version 4 (service lambda).';
    return errorAnswer(adminError('forbidden', why));
  }
  if (!found) return errorAnswer(adminError('not_found', `No route ${request.method} ${request.path}.`));
  if ('allow' in found) {
    return errorAnswer(
      adminError('method_not_allowed', `${request.path} takes ${found.allow}, not ${request.method}.`),
    );
  }
  return undefined;
}

/** A call as it arrived: the request, its id, where it was routed and when (the monotonic clock) it came. */
interface Received {
  request: AdminRequest;
  requestId: string;
  found: ReturnType<typeof route>;
  started: number;
}

/** How a call ended: its answer, the fault behind a 5xx if one was thrown, and the time (the context's clock). */
interface Ended {
  answer: Answer;
  fault: string | undefined;
  at: Date;
}

/** The audit line of a call (never a key: the path as logged has any key-shaped text redacted). */
function auditLine(call: Received, ended: Ended): AuditLine {
  const { request, found } = call;
  const { answer, fault } = ended;
  const status = answer.status;
  return {
    level: status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info',
    type: 'admin_audit',
    time: ended.at.toISOString(),
    request_id: call.requestId,
    principal: request.principal?.arn ?? null,
    account_id: request.principal?.accountId ?? null,
    method: request.method,
    path: redactKeys(request.path),
    ...(answer.redacted && { redacted: answer.redacted }),
    action: found && 'action' in found ? found.action : null,
    key_id: answer.keyId ?? (found && 'keyId' in found && !answer.redacted ? (found.keyId ?? null) : null),
    owner: answer.owner ?? null,
    ...(answer.newKeyId && { new_key_id: answer.newKeyId }),
    ...(answer.keys && { keys: answer.keys }),
    outcome: answer.outcome,
    status,
    // How long the call took, by the monotonic clock: the context's clock tells when, not how long.
    latency_ms: Math.round(performance.now() - call.started),
    ...(fault && { error: fault }),
  };
}

/** The answer as sent: its headers and its body (the error envelope, or the data with the request id). */
function responseOf(answer: Answer, { found, requestId }: Received): AdminResponse {
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
    ...(answer.replayed && { 'idempotent-replayed': 'true' }),
    ...(answer.retryAfter !== undefined && { 'retry-after': String(answer.retryAfter) }),
    ...(answer.status === 405 && found && 'allow' in found && { allow: found.allow }),
  };
  const body =
    answer.status >= 400
      ? errorEnvelope(answer.body as AdminError, requestId)
      : { ...(answer.body as object), request_id: requestId };
  return { status: answer.status, headers, body: JSON.stringify(body) };
}

/**
 * @example
 * const handle = createAdminHandler({ context, log: (line) => console.log(JSON.stringify(line)) });
 * const response = await handle({ method: 'GET', path: '/v1/keys', query: 'owner=u1', headers: {}, body: Buffer.alloc(0), principal });
 */
export function createAdminHandler(
  options: AdminHandlerOptions,
): (request: AdminRequest) => Promise<AdminResponse> {
  const { context, log } = options;
  return async (request) => {
    const call: Received = {
      request,
      requestId: newRequestId(),
      found: route(request.method, request.path),
      started: performance.now(),
    };
    let answer: Answer;
    let fault: string | undefined;
    try {
      answer = refusal(request, call.found) ?? (await dispatch(context, call.found as Routed, request));
    } catch (error) {
      fault = errorText(error);
      answer = errorAnswer(faultError(error));
    }
    log(auditLine(call, { answer, fault, at: context.now() }));
    return responseOf(answer, call);
  };
}

/**
 * A thrown fault as the answer: DynamoDB's throttling, faults and a call out of time, and a call that kept
 * losing to others, 503 with Retry-After; anything else 500.
 */
function faultError(error: unknown): AdminError {
  if (error instanceof ContentionError) {
    return {
      ...adminError('service_unavailable', "Too many changes at once to this owner's keys; try again."),
      retryAfter: 1,
    };
  }
  if (error instanceof DependencyError) {
    const transient = !(error instanceof AdminTableError) || error.transient;
    return {
      ...adminError(
        'service_unavailable',
        'The key tables did not answer in time; try again after Retry-After seconds.',
      ),
      retryAfter: transient ? 1 : 30,
    };
  }
  return adminError('internal_error', 'Something went wrong on our side; the call may be retried.');
}

const dataOf = (value: unknown) => ({ data: value });

/** One call to the admin API once routed: its action, key id, query and body checked, and the clock read once. */
interface Call {
  ctx: AdminContext;
  action: Action;
  keyId: string;
  query: URLSearchParams;
  body: unknown;
  now: Date;
  request: AdminRequest;
}

/** `then` on what `parsed` holds, or the 400 naming its problems. */
function checked<T>(call: Call, parsed: Parsed<T>, then: (value: T) => Promise<Answer>): Promise<Answer> {
  return parsed.ok ? then(parsed.value) : Promise.resolve({ ...invalid(parsed.problems), keyId: call.keyId });
}

/** The call's Idempotency-Key, bound to what it asks (action, target, body). */
function idempotencyOf(call: Call, target: string): Parsed<Idempotency | undefined> {
  const header = parseIdempotencyKey(call.request.headers['idempotency-key']);
  if (!header.ok) return header;
  return {
    ok: true,
    value:
      header.value === undefined
        ? undefined
        : { key: header.value, fingerprint: fingerprint(call.action, target, call.body ?? {}) },
  };
}

/** A key's answer: `value()` when the action succeeded, else its error's. */
function keyAnswer(
  call: Call,
  outcome: { ok: false; error: AdminError } | { ok: true },
  value: () => Answer,
): Answer {
  return outcome.ok ? value() : { ...errorAnswer(outcome.error), keyId: call.keyId };
}

/** A 200 about a key (of `owner`) with `data`. */
function keyData(call: Call, owner: string | undefined, data: unknown, outcome = 'ok'): Answer {
  return { status: 200, outcome, keyId: call.keyId, owner, body: dataOf(data) };
}

/** The key id of the path, percent-decoded when it can be, and checked. */
function pathKeyId(rawKeyId: string | undefined): Parsed<string> {
  if (rawKeyId === undefined) return { ok: true, value: '' };
  let decoded = rawKeyId;
  try {
    decoded = decodeURIComponent(rawKeyId);
  } catch {
    // Not percent-encoding: checked as it is, and refused.
  }
  return parseKeyId(decoded);
}

/** The routed call's action, under its deadline: after it, nothing more of the call is sent. */
async function dispatch(context: AdminContext, routed: Routed, request: AdminRequest): Promise<Answer> {
  const { action, keyId: rawKeyId } = routed;
  const deadline = AbortSignal.timeout(context.settings.deadlineMs);
  const ctx = { ...context, tables: context.tables.within(deadline) };
  const query = new URLSearchParams(request.query);
  if (action !== 'list' && request.query !== '') {
    return invalid(
      [...new Set(query.keys())].map((name) => ({ field: `?${name}`, problem: 'unknown parameter' })),
    );
  }
  const parsedKeyId = pathKeyId(rawKeyId);
  if (!parsedKeyId.ok) return invalid(parsedKeyId.problems);
  const keyId = parsedKeyId.value;
  const body = request.method === 'POST' ? readBody(request, keyField(action, keyId)) : { value: undefined };
  if ('status' in body) return { ...body, keyId };
  return ANSWERS[action]({ ctx, action, keyId, query, body: body.value, now: ctx.now(), request });
}

/** Where a route's body takes a key itself: a key to look up or revoke, each key of an import. */
function keyField(action: Action, keyId: string): string | undefined {
  if (action === 'import') return 'keys.key';
  return action === 'lookup' || (action === 'revoke' && keyId === '') ? 'key' : undefined;
}

/** What each action answers, the call checked. */
const ANSWERS: Record<Action, (call: Call) => Promise<Answer>> = {
  issue: (call) =>
    checked(call, parseIssue(call.body, call.now, call.ctx.settings.partnerDefaults), async (input) =>
      checked(call, idempotencyOf(call, input.owner ?? ''), async (idem) => {
        const outcome = await actions.issue(call.ctx, input, idem);
        if (!outcome.ok) return { ...errorAnswer(outcome.error), owner: input.owner };
        return issuedAnswer(outcome, call.now, 201);
      }),
    ),
  roll: (call) =>
    checked(call, parseRoll(call.body, call.now), async (input) =>
      checked(call, idempotencyOf(call, call.keyId), async (idem) => {
        const { keyId, now } = call;
        const outcome = await actions.roll(call.ctx, keyId, input, idem);
        if (!outcome.ok) return { ...errorAnswer(outcome.error), keyId };
        const answer = { ...issuedAnswer(outcome, now, 201), keyId, newKeyId: outcome.record.keyId };
        return {
          ...answer,
          body: {
            data: { ...(answer.body as { data: object }).data, old_key: shownKey(outcome.old, now) },
          },
        };
      }),
    ),
  list: (call) =>
    checked(call, parseList(call.query), async (input) => {
      const outcome = await actions.list(call.ctx, input);
      if (!outcome.ok) return errorAnswer(outcome.error);
      return {
        status: 200,
        outcome: 'ok',
        owner: input.owner,
        body: {
          data: outcome.records.map((record) =>
            shownKey(record, call.now, outcome.lastUsed.get(record.keyId) ?? null),
          ),
          page: { next_cursor: outcome.next ? encodeCursor(outcome.next) : null },
        },
      };
    }),
  get: async (call) => {
    const outcome = await actions.get(call.ctx, call.keyId);
    return keyAnswer(call, outcome, () => {
      const { record, lastUsed } = outcome as Extract<typeof outcome, { ok: true }>;
      return keyData(call, record.owner, shownKey(record, call.now, lastUsed));
    });
  },
  usage: async (call) => {
    const outcome = await actions.usage(call.ctx, call.keyId);
    return keyAnswer(call, outcome, () => {
      const { usage } = outcome as Extract<typeof outcome, { ok: true }>;
      return keyData(call, usage.record.owner, usageView(usage));
    });
  },
  revoke: (call) => (call.keyId === '' ? revokeByKeyAnswer(call) : revokeOrEnable(call, actions.revoke)),
  lookup: (call) =>
    checked(call, parseKeyBody(call.body), async (key) => {
      const found = await findByKey(call.ctx, key);
      if (!found.ok) return errorAnswer(found.error);
      const { record } = found;
      const used = await lastUsed(call.ctx.tables, [record.keyId], call.now);
      const data = shownKey(record, call.now, used.lastUsed.get(record.keyId) ?? null);
      return { status: 200, outcome: 'ok', keyId: record.keyId, owner: record.owner, body: dataOf(data) };
    }),
  import: (call) => {
    const context = { now: call.now, partnerDefaults: call.ctx.settings.partnerDefaults };
    return checked(call, parseImportBody(call.body, context), async (input) => {
      const outcome = await importKeys(call.ctx, input);
      if (!outcome.ok) return errorAnswer(outcome.error);
      const { result } = outcome;
      const keys = {
        imported: result.imported,
        already_there: result.already_there,
        conflicts: result.conflicts,
      };
      return { status: 200, outcome: 'ok', body: dataOf(result), keys };
    });
  },
  enable: (call) => revokeOrEnable(call, actions.enable),
  limits: (call) =>
    checked(call, parseLimits(call.body), async (input) => {
      const outcome = await actions.setLimits(call.ctx, call.keyId, input);
      return keyAnswer(call, outcome, () => {
        const done = outcome as Extract<typeof outcome, { ok: true }>;
        return keyData(call, done.record.owner, {
          ...shownKey(done.record, call.now),
          previous_limits: done.previous,
          effective_by: done.effectiveBy,
        });
      });
    }),
  expiry: (call) =>
    checked(call, parseExpiry(call.body, call.now), async (input) => {
      const outcome = await actions.setExpiry(call.ctx, call.keyId, input);
      return keyAnswer(call, outcome, () => {
        const done = outcome as Extract<typeof outcome, { ok: true }>;
        return keyData(call, done.record.owner, {
          ...shownKey(done.record, call.now),
          effective_by: done.effectiveBy,
        });
      });
    }),
};

/** revoke and enable: no body, the key's record and whether anything changed. */
function revokeOrEnable(call: Call, act: typeof actions.revoke | typeof actions.enable): Promise<Answer> {
  return checked(call, parseEmpty(call.body), async () => {
    const outcome = await act(call.ctx, call.keyId);
    return keyAnswer(call, outcome, () => {
      const done = outcome as Extract<typeof outcome, { ok: true }>;
      const data = {
        ...shownKey(done.record, call.now),
        changed: !done.already,
        effective_by: done.effectiveBy,
        ...('stoppedUntil' in done && { stopped_until: done.stoppedUntil }),
      };
      return keyData(call, done.record.owner, data, done.already ? 'unchanged' : 'ok');
    });
  });
}

/** revoke by the key itself (`POST /v1/keys/revoke` with `{"key": …}`): the same answer as by its id. */
function revokeByKeyAnswer(call: Call): Promise<Answer> {
  return checked(call, parseKeyBody(call.body), async (key) => {
    const outcome = await revokeByKey(call.ctx, key);
    if (!outcome.ok) return errorAnswer(outcome.error);
    const { record, already, effectiveBy, stoppedUntil } = outcome;
    const data = {
      ...shownKey(record, call.now),
      changed: !already,
      effective_by: effectiveBy,
      stopped_until: stoppedUntil,
    };
    return {
      status: 200,
      outcome: already ? 'unchanged' : 'ok',
      keyId: record.keyId,
      owner: record.owner,
      body: dataOf(data),
    };
  });
}

function issuedAnswer(outcome: actions.Issued, now: Date, status: number): Answer {
  return {
    status,
    outcome: outcome.replayed ? 'replayed' : 'created',
    keyId: outcome.record.keyId,
    owner: outcome.record.owner,
    replayed: outcome.replayed,
    body: dataOf({ key: outcome.key ?? null, replayed: outcome.replayed, ...shownKey(outcome.record, now) }),
  };
}

/** The usage answer: what a user area charts. */
function usageView(usage: KeyUsage) {
  const { record } = usage;
  const month = (m: KeyUsage['current']) => ({
    month: m.month,
    count: m.count,
    days: m.days,
    unattributed: m.unattributed,
  });
  return {
    key_id: record.keyId,
    owner: record.owner ?? null,
    limits: { ...record.limits },
    minute: {
      start: isoSeconds(usage.minute * 1000),
      count: usage.minuteCount,
    },
    month: {
      month: usage.current.month,
      count: usage.current.count,
      remaining: Math.max(0, record.limits.month - usage.current.count),
    },
    last_used: usage.lastUsed,
    months: [month(usage.previous), month(usage.current)],
  };
}
