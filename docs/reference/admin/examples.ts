/**
 * What the key-administration page shows for each of its 12 operations: signed samples (curl `--aws-sigv4`,
 * TypeScript with the AWS SDK's signer, Python with botocore's SigV4Auth) and real exchanges (exchanges.ts) —
 * the successes, and every error the operation can give that a request can cause — produced by the admin API
 * over its tables when the page is built.
 *
 * The page is one walk, in the order of {@link walk}: a user's keys issued in December, used on the public API
 * since, listed, read, charted, changed, rolled, revoked and made usable again on 15 January; each step is shown
 * under its operation (or is set-up, not shown); then a key reported leaked is found and revoked from the key itself, and keys
 * an old system issued are imported. A step answered otherwise than it expects fails the build.
 * The samples send the first success of their operation; test/docs/reference/admin-samples.test.ts runs every
 * one against the admin API of `npm start`.
 */
import type { NamedExchange, ShownExchange } from '../shown.js';
import { type AdminAsk, type AdminWorld, exampleIdempotencyKey, exampleKey } from './exchanges.js';
import { curlSample, pythonSample, typescriptSample } from './samples.js';

/**
 * The story's today, when the keys are managed (the samples' dates are of that day: a reader's are of theirs).
 * The same moment as the API page's examples (docs/reference/exchanges.ts).
 */
export const STORY_TODAY = '2026-01-15T09:30:30Z';

/** The keys the walk makes and refers to later. */
type KeyName = 'laptop' | 'sync' | 'rolled' | 'capped' | 'lapsed';

/**
 * What a step can refer to: the key ids made so far, the keys themselves where an answer showed them (a key
 * reported leaked is looked up and revoked from the key), and the cursor of the last answer that had one.
 */
interface Made {
  ids: Partial<Record<KeyName, string>>;
  keys: Partial<Record<KeyName, string>>;
  cursor?: string;
}

/** A request of the walk: shown under `operation` as a success or an error, or set-up (not shown). */
interface Call {
  operation: string;
  kind: 'success' | 'error' | 'setup';
  name: string;
  summary: string;
  /** The status it must be answered with. */
  status: number;
  ask: (made: Made) => AdminAsk;
  /** Keep the key id of the answer under this name. */
  keep?: KeyName;
}

type Step = Call | { at: string } | { use: KeyName; at: string; requests: number };

const id = (made: Made, name: KeyName) => {
  const found = made.ids[name];
  if (!found)
    throw new Error(`docs/reference/admin/examples.ts: the walk uses the key ${name} before making it`);
  return found;
};
const idempotent = (name: string) => ({ 'idempotency-key': exampleIdempotencyKey(name) });

const ISSUE_LAPTOP: AdminAsk = {
  method: 'POST',
  target: '/keys',
  body: { owner: 'user_42', tier: 'free', label: 'my laptop' },
  headers: idempotent('issue laptop'),
};

/**
 * `org:7` at the cap on 15 January: 10 usable keys; besides them key 1, revoked (and replaced), and key 2, which
 * expired on 10 January (and was replaced on 12 January). Set-up.
 */
function ownerAtTheCap(): Step[] {
  const seat = (n: number, at: string, more: { expires?: string; keep?: KeyName } = {}): Step[] => [
    { at },
    {
      operation: 'issue',
      kind: 'setup',
      name: `org key ${n}`,
      summary: '',
      status: 201,
      ask: () => ({
        method: 'POST',
        target: '/keys',
        body: {
          owner: 'org:7',
          tier: 'free',
          label: `seat ${n}`,
          ...(more.expires && { expires: more.expires }),
        },
      }),
      ...(more.keep && { keep: more.keep }),
    },
  ];
  const steps: Step[] = [
    ...seat(1, '2025-12-05T10:01:00Z', { keep: 'capped' }),
    {
      operation: 'revoke',
      kind: 'setup',
      name: 'org key 1 revoked',
      summary: '',
      status: 200,
      ask: (made) => ({ method: 'POST', target: `/keys/${id(made, 'capped')}/revoke` }),
    },
    ...seat(2, '2025-12-05T10:02:00Z', { expires: '2026-01-10T00:00:00Z', keep: 'lapsed' }),
  ];
  for (let n = 3; n <= 11; n++) steps.push(...seat(n, `2025-12-05T10:${String(n).padStart(2, '0')}:00Z`));
  steps.push(...seat(12, '2026-01-12T08:00:00Z'));
  return steps;
}

/** Requests counted on the public API: last month and this month. */
const USE: Step[] = [
  { use: 'laptop', at: '2025-12-03T08:15:00Z', requests: 4 },
  { use: 'laptop', at: '2025-12-10T17:40:00Z', requests: 9 },
  { use: 'laptop', at: '2025-12-22T12:00:00Z', requests: 3 },
  { use: 'laptop', at: '2026-01-05T09:00:00Z', requests: 12 },
  { use: 'laptop', at: '2026-01-14T20:30:00Z', requests: 6 },
  { use: 'laptop', at: '2026-01-15T09:29:10Z', requests: 2 },
  { use: 'sync', at: '2026-01-15T02:00:00Z', requests: 25 },
];

/** The walk, in order. */
function walk(): Step[] {
  return [
    { at: '2025-12-02T10:00:00Z' },
    {
      operation: 'issue',
      kind: 'success',
      name: 'free-key',
      summary: 'A free key for user_42, with a label',
      status: 201,
      ask: () => ISSUE_LAPTOP,
      keep: 'laptop',
    },
    { at: '2025-12-02T10:05:00Z' },
    {
      operation: 'issue',
      kind: 'success',
      name: 'partner-key',
      summary: 'A partner key with its own limits and an expiry',
      status: 201,
      ask: () => ({
        method: 'POST',
        target: '/keys',
        body: {
          owner: 'user_42',
          tier: 'partner',
          label: 'nightly sync',
          limits: { minute: 1200, month: 2_000_000 },
          expires: '2026-12-31T00:00:00Z',
        },
        headers: idempotent('issue sync'),
      }),
      keep: 'sync',
    },
    {
      operation: 'issue',
      kind: 'success',
      name: 'replayed',
      summary: 'The first call again, with its Idempotency-Key (a retry): the same key id, without the key',
      status: 201,
      ask: () => ISSUE_LAPTOP,
    },
    ...ownerAtTheCap(),
    ...USE,
    { at: STORY_TODAY },
    ...issueErrors(),
    ...listAndRead(),
    ...changes(),
    ...rollRevokeEnable(),
    ...fromTheKey(),
    ...imports(),
  ];
}

/** The steps shown under `operation`: `success(…)` and `error(…)` make them. */
function stepsOf(operation: string) {
  const make =
    (kind: 'success' | 'error') =>
    (name: string, summary: string, status: number, ask: Call['ask'], keep?: KeyName): Call => ({
      operation,
      kind,
      name,
      summary,
      status,
      ask,
      ...(keep && { keep }),
    });
  return { success: make('success'), error: make('error') };
}

/** A POST to one of a key's actions. */
const action =
  (key: KeyName, verb: string, body?: unknown, headers?: Record<string, string>) =>
  (made: Made): AdminAsk => ({
    method: 'POST',
    target: `/keys/${id(made, key)}/${verb}`,
    ...(body !== undefined && { body }),
    ...(headers && { headers }),
  });

/** A request the page writes whatever the keys made so far. */
const fixed = (ask: AdminAsk) => () => ask;

function issueErrors(): Step[] {
  const issue = stepsOf('issue');
  const post = (body: unknown, headers?: Record<string, string>) =>
    fixed({ method: 'POST', target: '/keys', body, ...(headers && { headers }) });
  return [
    issue.error(
      'invalid',
      'Fields that are not valid: each one is named',
      400,
      post({ owner: '', tier: 'gold', limits: { minute: 0 }, colour: 'blue' }),
    ),
    issue.error(
      'owner-at-the-cap',
      'An owner who holds 10 usable keys already',
      409,
      post({ owner: 'org:7', tier: 'free', label: 'seat 12' }, idempotent('issue seat 12')),
    ),
    issue.error(
      'idempotency-key-reused',
      'The Idempotency-Key of another request',
      422,
      fixed({ ...ISSUE_LAPTOP, body: { owner: 'user_42', tier: 'free', label: 'my phone' } }),
    ),
    issue.error(
      'not-json',
      'A body that is not JSON',
      415,
      post('owner=user_42&tier=free', { 'content-type': 'application/x-www-form-urlencoded' }),
    ),
    issue.error(
      'too-large',
      'A body over 16 KiB',
      413,
      post({ owner: 'user_42', label: 'x'.repeat(17_000) }),
    ),
    issue.error(
      'no-such-route',
      'A path that is no route',
      404,
      fixed({ method: 'POST', target: '/key', body: {} }),
    ),
    issue.error(
      'method-not-allowed',
      'Another method on /v1/keys',
      405,
      fixed({ method: 'DELETE', target: '/keys' }),
    ),
  ];
}

function listAndRead(): Step[] {
  const [list, get, usage] = [stepsOf('list'), stepsOf('get'), stepsOf('usage')];
  const owner = (query: string) => fixed({ method: 'GET', target: `/keys?${query}` });
  const ofKey =
    (key: KeyName, rest = '') =>
    (made: Made) => ({ method: 'GET', target: `/keys/${id(made, key)}${rest}` });
  return [
    list.success(
      'owner-keys',
      "An owner's keys, oldest first, with their last use",
      200,
      owner('owner=user_42'),
    ),
    list.success(
      'first-page',
      'One a page: the first, and the cursor of the next',
      200,
      owner('owner=user_42&limit=1'),
    ),
    list.success('next-page', 'The next page: its cursor passed back', 200, (made) =>
      owner(`owner=user_42&limit=1&cursor=${encodeURIComponent(made.cursor ?? '')}`)(),
    ),
    list.success('no-keys', 'An owner with no keys', 200, owner('owner=user_7')),
    list.error('missing-owner', 'No owner', 400, fixed({ method: 'GET', target: '/keys' })),
    list.error('invalid-limit', 'A page of more than 100', 400, owner('owner=user_42&limit=500')),
    get.success('key', 'A key, with its last use', 200, ofKey('laptop')),
    get.error(
      'no-such-key',
      'No key with this id',
      404,
      fixed({ method: 'GET', target: '/keys/key_0000000000' }),
    ),
    get.error('malformed-id', 'Not a key id', 400, fixed({ method: 'GET', target: '/keys/42' })),
    get.error('method-not-allowed', 'DELETE: a key is revoked, never deleted', 405, (made) => ({
      ...ofKey('laptop')(made),
      method: 'DELETE',
    })),
    usage.success(
      'usage',
      "Last month's and this month's requests, day by day",
      200,
      ofKey('laptop', '/usage'),
    ),
    usage.error(
      'no-such-key',
      'No key with this id',
      404,
      fixed({ method: 'GET', target: '/keys/key_0000000000/usage' }),
    ),
  ];
}

function changes(): Step[] {
  const [limits, expiry] = [stepsOf('limits'), stepsOf('expiry')];
  return [
    limits.success(
      'raise',
      "A partner key's minute limit raised",
      200,
      action('sync', 'limits', { minute: 3000 }),
    ),
    limits.error(
      'free-key',
      'A free key: its limits are the published ones',
      400,
      action('laptop', 'limits', { minute: 120 }),
    ),
    limits.error(
      'out-of-bounds',
      'More than 60,000 a minute',
      400,
      action('sync', 'limits', { minute: 100_000 }),
    ),
    expiry.success(
      'set',
      'An expiry set',
      200,
      action('sync', 'expiry', { expires: '2026-06-30T00:00:00Z' }),
    ),
    expiry.success('remove', 'The expiry removed', 200, action('sync', 'expiry', { expires: null })),
    expiry.error(
      'past',
      'An expiry in the past',
      400,
      action('sync', 'expiry', { expires: '2025-06-30T00:00:00Z' }),
    ),
    expiry.error(
      'owner-at-the-cap',
      'An expired key given a new expiry, its owner holding 10 usable keys',
      409,
      action('lapsed', 'expiry', { expires: '2026-12-31T00:00:00Z' }),
    ),
  ];
}

function rollRevokeEnable(): Step[] {
  const [roll, revoke, enable] = [stepsOf('roll'), stepsOf('revoke'), stepsOf('enable')];
  const rolling = action(
    'laptop',
    'roll',
    { old_key_expires: '2026-01-16T09:30:30Z' },
    idempotent('roll laptop'),
  );
  return [
    roll.success(
      'roll',
      'A new key for the same owner; the old one goes on for a day',
      201,
      rolling,
      'rolled',
    ),
    roll.success(
      'replayed',
      'The same roll again (a retry): the same new key id, without the key',
      201,
      rolling,
    ),
    roll.error(
      'already-rolled',
      'A key rolled before',
      409,
      action('laptop', 'roll', {}, idempotent('roll again')),
    ),
    roll.error(
      'idempotency-key-reused',
      'The Idempotency-Key of another roll',
      422,
      action('sync', 'roll', {}, idempotent('roll laptop')),
    ),
    roll.error(
      'grace-too-long',
      'The old key kept more than 30 days',
      400,
      action('sync', 'roll', { old_key_expires: '2026-03-01T00:00:00Z' }, idempotent('roll long')),
    ),
    revoke.success('revoke', 'A key revoked', 200, action('sync', 'revoke')),
    revoke.success('again', 'Revoked again: nothing changes', 200, action('sync', 'revoke')),
    revoke.error(
      'unknown-field',
      'A body revoke does not take',
      400,
      action('sync', 'revoke', { reason: 'lost' }),
    ),
    revoke.error(
      'not-json',
      'A body that is not JSON',
      415,
      action('sync', 'revoke', 'lost', { 'content-type': 'text/plain' }),
    ),
    roll.error('not-active', 'A revoked key', 409, action('sync', 'roll', {}, idempotent('roll revoked'))),
    enable.success('enable', 'A revoked key made usable again', 200, action('sync', 'enable')),
    enable.error(
      'owner-at-the-cap',
      'A key of an owner who holds 10 usable keys',
      409,
      action('capped', 'enable'),
    ),
  ];
}

const keyOf = (made: Made, name: KeyName) => {
  const found = made.keys[name];
  if (!found)
    throw new Error(`docs/reference/admin/examples.ts: the walk uses the key of ${name}, never shown`);
  return found;
};

/** A key reported leaked: found and revoked from the key itself (it goes in the body, never a URL). */
function fromTheKey(): Step[] {
  const [lookup, revokeByKey] = [stepsOf('lookup'), stepsOf('revokeByKey')];
  const post = (target: string, key: (made: Made) => string) => (made: Made) => ({
    method: 'POST',
    target,
    body: { key: key(made) },
  });
  return [
    lookup.success(
      'leaked',
      'A key a user reported leaked: its key id, owner and last use',
      200,
      post('/keys/lookup', (made) => keyOf(made, 'laptop')),
    ),
    lookup.error(
      'no-such-key',
      'A key that is no key of the table (issued elsewhere, or made up)',
      404,
      post('/keys/lookup', () => exampleKey('no-such-key')),
    ),
    lookup.error(
      'not-a-key',
      'A key id where the key goes (never echoed)',
      400,
      post('/keys/lookup', (made) => id(made, 'laptop')),
    ),
    revokeByKey.success(
      'revoke',
      'The leaked key revoked from the key itself: refused by every proxy container at once',
      200,
      post('/keys/revoke', (made) => keyOf(made, 'laptop')),
    ),
    revokeByKey.error(
      'no-such-key',
      'A key that is no key of the table',
      404,
      post('/keys/revoke', () => exampleKey('no-such-key')),
    ),
    revokeByKey.error(
      'not-a-key',
      'Not a key (never echoed)',
      400,
      post('/keys/revoke', () => 'pk_live_Example-too-short'),
    ),
  ];
}

/** Keys the old system issued, brought over: one as the key, one as its SHA-256, one revoked there. */
const OLD_KEYS = [
  {
    key: exampleKey('old system 001'),
    tier: 'partner',
    owner: 'org:9',
    minute: 1200,
    month: 2_000_000,
    label: 'warehouse sync',
    created: '2024-03-01T10:00:00Z',
    external_id: 'ak_1001',
  },
  {
    key_sha256: '2a3b6e3b1b4b8f6f2ff2f1c34b0ef45f06b3a0bcb79fbe4b5d3b1c1e0a9f2d11',
    tier: 'free',
    owner: 'user_77',
    external_id: 'ak_1002',
  },
  { key_sha256: 'c0ffee'.repeat(10).concat('c0ff'), tier: 'free', status: 'revoked', external_id: 'ak_1003' },
];

function imports(): Step[] {
  const importing = stepsOf('import');
  const post = (body: unknown) => fixed({ method: 'POST', target: '/keys/import', body });
  return [
    importing.success(
      'import',
      'Keys the old system issued: the key, its SHA-256, a revoked one; each with its key id',
      200,
      post({ keys: OLD_KEYS }),
    ),
    importing.success(
      'again',
      'The same batch again (a retry, or a second run): nothing written twice',
      200,
      post({ keys: OLD_KEYS }),
    ),
    importing.success(
      'dry-run',
      'A dry run: checked and compared, nothing written',
      200,
      post({ keys: [{ key: exampleKey('old system 002'), tier: 'free' }], dry_run: true }),
    ),
    importing.error(
      'invalid',
      'A key of no tier and a key twice: the batch refused whole, nothing written',
      400,
      post({
        keys: [
          { key: exampleKey('old system 003'), tier: 'gold' },
          { key_sha256: OLD_KEYS[1]!.key_sha256, tier: 'free' },
          { key_sha256: OLD_KEYS[1]!.key_sha256, tier: 'free' },
        ],
      }),
    ),
  ];
}

/** Everything the page shows for one operation. */
export interface AdminOperationExamples {
  operationId: string;
  /** The first is the one the samples send. */
  success: NamedExchange[];
  errors: NamedExchange[];
  samples: { curl: string; typescript: string; python: string };
}

/** A failure every operation of its kind can meet: its status, and the request that meets it. */
interface Failure {
  status: number;
  name: string;
  summary: string;
  ask: AdminAsk;
}

const KEY_ID = /key_[A-Za-z0-9]{10}/;

/**
 * The failures an operation can meet whatever its own rules, made from the request of its first success: a
 * malformed or unknown key id, not signed, another method, a body too large or not JSON, its tables down.
 */
function failures(first: ShownExchange): Failure[] {
  const { method, target: shownTarget, body, headers: sentHeaders } = first.request;
  const target = shownTarget.replace(/^\/v1/, '');
  const json = sentHeaders['content-type']
    ? { headers: { 'content-type': sentHeaders['content-type'] } }
    : {};
  const same: AdminAsk = { method, target, ...(body !== undefined && { body }), ...json };
  const keyed = KEY_ID.test(target);
  const post = method === 'POST';
  const all: (Failure | false)[] = [
    keyed && {
      status: 400,
      name: 'malformed-id',
      summary: 'Not a key id',
      ask: { ...same, target: target.replace(KEY_ID, '42') },
    },
    {
      status: 403,
      name: 'unsigned',
      summary: 'Not signed (on AWS the function URL answers this itself, with {"Message":"Forbidden"})',
      ask: { ...same, unsigned: true },
    },
    keyed
      ? {
          status: 404,
          name: 'no-such-key',
          summary: 'No key with this id',
          ask: { ...same, target: target.replace(KEY_ID, 'key_0000000000') },
        }
      : {
          status: 404,
          name: 'no-such-route',
          summary: 'A path that is no route',
          ask: { ...same, target: target.replace('/keys', '/key') },
        },
    {
      status: 405,
      name: 'method-not-allowed',
      summary: 'DELETE: a key is revoked, never deleted',
      ask: { method: 'DELETE', target: target.split('?')[0]! },
    },
    post && {
      status: 413,
      name: 'too-large',
      summary: 'A body over 16 KiB',
      ask: { method, target, body: { label: 'x'.repeat(17_000) } },
    },
    post && {
      status: 415,
      name: 'not-json',
      summary: 'A body that is not JSON',
      ask: { method, target, body: 'lost', headers: { 'content-type': 'text/plain' } },
    },
    {
      status: 503,
      name: 'tables-unavailable',
      summary: 'DynamoDB did not answer: nothing was written; retry after Retry-After',
      ask: { ...same, tablesDown: true },
    },
  ];
  return all.filter((failure): failure is Failure => failure !== false);
}

/**
 * Walk the page's steps through the admin API, then add each operation's failures of the statuses it
 * documents (`documented`) and has no example of yet.
 * @example const examples = await adminExamples(world, (id, status) => true); examples.get('issue')?.samples.curl
 */
export async function adminExamples(
  world: AdminWorld,
  documented: (operationId: string, status: number) => boolean,
): Promise<Map<string, AdminOperationExamples>> {
  const out = new Map<string, AdminOperationExamples>();
  const made: Made = { ids: {}, keys: {} };
  for (const step of walk()) {
    if ('use' in step) await world.use(id(made, step.use), step.at, step.requests);
    else if (!('operation' in step)) world.at(step.at);
    else await walkStep(world, step, made, out);
  }
  for (const [operationId, examples] of out) {
    const first = examples.success[0];
    if (!first) throw new Error(`docs/reference/admin/examples.ts: ${operationId} has no success to show`);
    // Each status the operation documents and has no example of yet, met with a failure of its kind.
    const shown = new Set(examples.errors.map((named) => named.exchange.status));
    for (const failure of failures(first.exchange)) {
      if (shown.has(failure.status) || !documented(operationId, failure.status)) continue;
      const name = `${operationId} error ${failure.name}`;
      const exchange = (await world.send(name, failure.ask)).shown;
      expectStatus(name, exchange, failure.status);
      examples.errors.push({ name: failure.name, summary: failure.summary, exchange });
    }
    examples.errors.sort((a, b) => a.exchange.status - b.exchange.status);
    examples.samples = {
      curl: curlSample(first.exchange),
      typescript: typescriptSample(first.exchange),
      python: pythonSample(first.exchange),
    };
  }
  return out;
}

async function walkStep(
  world: AdminWorld,
  step: Call,
  made: Made,
  out: Map<string, AdminOperationExamples>,
): Promise<void> {
  const name = `${step.operation} ${step.kind} ${step.name}`;
  const { shown, raw } = await world.send(name, step.ask(made));
  expectStatus(name, shown, step.status);
  const answer = JSON.parse(raw) as {
    data?: { key_id?: string; key?: string | null };
    page?: { next_cursor?: string | null };
  };
  if (step.keep) made.ids[step.keep] = answer.data?.key_id ?? '';
  if (step.keep && answer.data?.key) made.keys[step.keep] = answer.data.key;
  if (answer.page?.next_cursor) made.cursor = answer.page.next_cursor;
  if (step.kind === 'setup') return;
  let examples = out.get(step.operation);
  if (!examples) {
    examples = {
      operationId: step.operation,
      success: [],
      errors: [],
      samples: { curl: '', typescript: '', python: '' },
    };
    out.set(step.operation, examples);
  }
  examples[step.kind === 'success' ? 'success' : 'errors'].push({
    name: step.name,
    summary: step.summary,
    exchange: shown,
  });
}

/** Fails the build when the admin API answers a step otherwise than the walk expects. */
function expectStatus(name: string, shown: ShownExchange, status: number): void {
  if (shown.status !== status) {
    throw new Error(
      `${name}: ${shown.request.method} ${shown.request.target} was answered ${shown.status} ${shown.body ?? ''}; docs/reference/admin/examples.ts expects ${status}`,
    );
  }
}
