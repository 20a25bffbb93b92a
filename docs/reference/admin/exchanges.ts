/**
 * Real exchanges with the key-administration API for its reference page (`/docs/admin`): the admin API's own
 * handler (admin/http/handler.ts, what its function URL and `npm start` run) in this process, over real tables —
 * a local DynamoDB of its own (@catalogue/local-aws's startDynamo) on a loopback port, with the tables of admin/tables.ts — and requests counted
 * by the request path's own meter (proxy/quota/dynamo.ts), so usage shows what the public API counted. A
 * failing table is a DynamoDB endpoint that refuses connections, really.
 *
 * The clock is the example's (set step by step: a key issued in December, used since, managed on 15 January).
 * What the API draws at random — request ids, key ids, keys, cursors — is shown as stand-ins, the same from
 * build to build (a stand-in key is a key of nothing, marked `Example`), so the page changes when the behaviour
 * does and never holds a key anyone was given. The samples send what the example sent; the signature is the
 * function URL's business (the handler is given the signer, as the function URL gives it after checking).
 *
 * Run in its own process by docs/reference/build.ts (through admin/document.ts).
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDynamo } from '@catalogue/local-aws';
import { AdminTables } from '../../../admin/dynamo.js';
import { type AdminRequest, createAdminHandler } from '../../../admin/http/handler.js';
import { adminSettings } from '../../../admin/settings.js';
import { createTables } from '../../../admin/tables.js';
import { LeanDynamo } from '../../../aws/dynamodb.js';
import { credentialProvider, dynamoClient, leanDynamo } from '../../../aws/sdk.js';
import { DynamoQuotaMeter } from '../../../proxy/quota/dynamo.js';
import { LeanCounterTransport } from '../../../proxy/quota/dynamo-lean.js';
import { exampleRequestId, type ShownExchange } from '../shown.js';

/** The caller every example is signed by (the function URL tells the handler who signed). */
const PRINCIPAL = {
  arn: 'arn:aws:sts::123456789012:assumed-role/catalogue-app/i-0example',
  accountId: '123456789012',
};
const REGION = 'us-east-1';
const TABLES = { keysTable: 'catalogue-keys', countersTable: 'catalogue-counters' };

/** What a request of the page sends. */
export interface AdminAsk {
  method: string;
  /** Path and query under the base URL, e.g. `/keys?owner=user_42`. */
  target: string;
  /** A JSON body (sent as `application/json`), or raw text with its own Content-Type in `headers`. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Unsigned (the function URL refuses it; `npm start` answers 403): default signed. */
  unsigned?: boolean;
  /** The tables do not answer (their DynamoDB endpoint refuses connections). */
  tablesDown?: boolean;
}

/** A shown exchange and the answer as it really came (the next request of a walk is made from it). */
export interface AdminExchange {
  shown: ShownExchange;
  /** The answer's body as it came, before stand-ins. */
  raw: string;
}

/** A key as the page shows one: `pk_live_Example` and 15 characters of `digest` (base64url) — no one's key. */
const exampleKeyOf = (digest: string) => `pk_live_Example${digest.replace(/[-_]/g, 'x').slice(0, 15)}`;

/** The random values of the API's answers, each shown as a stand-in derived from its kind and rank. */
const RANDOM: readonly { kind: string; pattern: RegExp; standIn: (digest: string) => string }[] = [
  {
    kind: 'key',
    pattern: /(?<![\w-])pk_live_[A-Za-z0-9_-]{22}(?![\w-])/g,
    standIn: (digest) => exampleKeyOf(digest),
  },
  {
    kind: 'key id',
    pattern: /(?<![\w-])key_[A-Za-z0-9]{10}(?![\w-])/g,
    standIn: (digest) => `key_${digest.replace(/[-_]/g, 'x').slice(0, 10)}`,
  },
];

/**
 * Stand-ins for what the API draws at random: a value first seen in an answer (never in a request the page
 * wrote itself) gets the stand-in of its kind and rank (the first key id, the second…).
 */
class StandIns {
  readonly #shown = new Map<string, string>();
  readonly #counts = new Map<string, number>();

  /** Values the page wrote itself keep their text (`key_0000000000` of a 404). */
  keep(text: string): void {
    for (const { pattern } of RANDOM) {
      for (const [value] of text.matchAll(pattern))
        if (!this.#shown.has(value)) this.#shown.set(value, value);
    }
  }

  /** Name every new random value of an answer. */
  learn(text: string): void {
    for (const { kind, pattern, standIn } of RANDOM) {
      for (const [value] of text.matchAll(pattern)) {
        if (this.#shown.has(value)) continue;
        const rank = (this.#counts.get(kind) ?? 0) + 1;
        this.#counts.set(kind, rank);
        this.#shown.set(value, standIn(createHash('sha256').update(`${kind} ${rank}`).digest('base64url')));
      }
    }
  }

  /** A cursor (opaque, made of what it points at) as a stand-in of the same length. */
  cursor(value: string): string {
    let shown = this.#shown.get(value);
    if (!shown) {
      const rank = (this.#counts.get('cursor') ?? 0) + 1;
      this.#counts.set('cursor', rank);
      let digest = '';
      for (let round = 0; digest.length < value.length; round++) {
        digest += createHash('sha256').update(`cursor ${rank} ${round}`).digest('base64url');
      }
      shown = digest.slice(0, value.length);
      this.#shown.set(value, shown);
    }
    return shown;
  }

  show(text: string): string {
    let shown = text;
    for (const { pattern } of RANDOM)
      shown = shown.replace(pattern, (value) => this.#shown.get(value) ?? value);
    return shown;
  }
}

/** A loopback port that refuses connections: a DynamoDB that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((closed) => server.close(() => closed()));
  return port;
}

/** The page's own Idempotency-Key of an example: a UUID made of its name, the same at every build. */
export function exampleIdempotencyKey(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * A key the page's examples send that no table holds (one reported leaked but issued elsewhere, one an old system
 * issued), shown as the answers' keys are (marked Example), the same for the same `name`.
 * @example exampleKey('no-such-key') // → 'pk_live_Example' and 15 characters, the same at every build
 */
export function exampleKey(name: string): string {
  return exampleKeyOf(createHash('sha256').update(`example key ${name}`).digest('base64url'));
}

/**
 * The admin API over its tables, with the page's clock. `send` one request at a time (the page is one walk).
 * @example const world = await AdminWorld.start(); const issued = await world.send('issue 201 free', { method: 'POST', target: '/keys', body });
 */
export class AdminWorld {
  #now = new Date(0);
  readonly #standIns = new StandIns();
  readonly #handle: ReturnType<typeof createAdminHandler>;
  readonly #down: ReturnType<typeof createAdminHandler>;

  private constructor(
    readonly tables: AdminTables,
    down: AdminTables,
    readonly meter: DynamoQuotaMeter,
    readonly close: () => Promise<void>,
  ) {
    const settings = adminSettings({ KEYS_TABLE: TABLES.keysTable, COUNTERS_TABLE: TABLES.countersTable });
    const context = (on: AdminTables) => ({ tables: on, settings, now: () => this.#now });
    this.#handle = createAdminHandler({ context: context(tables), log: () => {} });
    this.#down = createAdminHandler({ context: context(down), log: () => {} });
  }

  static async start(): Promise<AdminWorld> {
    const server = await startDynamo();
    const { endpoint } = server;
    const client = dynamoClient({ endpoint });
    await createTables(client, TABLES);
    const dynamo = leanDynamo(endpoint, REGION);
    const closed = `http://127.0.0.1:${await closedPort()}`;
    const downDynamo = new LeanDynamo({
      endpoint: closed,
      region: REGION,
      credentials: credentialProvider(closed),
      maxAttempts: 1,
    });
    const transport = new LeanCounterTransport({
      endpoint,
      region: REGION,
      credentials: credentialProvider(endpoint),
    });
    return new AdminWorld(
      new AdminTables({ dynamo, ...TABLES }),
      new AdminTables({ dynamo: downDynamo, ...TABLES }),
      new DynamoQuotaMeter({ transport, table: TABLES.countersTable }),
      async () => {
        client.destroy();
        await dynamo.close();
        await downDynamo.close();
        await transport.close();
        await server.dispose();
      },
    );
  }

  /** Set the clock of the next requests. */
  at(time: string | Date): void {
    this.#now = new Date(time);
  }

  /** Count `requests` of a key on the public API at `time`, as the request path meters them. */
  async use(keyId: string, time: string, requests: number): Promise<void> {
    const record = await this.tables.keyById(keyId);
    if (!record) throw new Error(`no key ${keyId} to count requests of`);
    for (let count = 0; count < requests; count++) {
      const outcome = await this.meter.meter(record, new Date(time));
      if (!outcome.ok) throw new Error(`the meter refused a request of ${keyId} at ${time}`);
    }
  }

  /** Send one request to the admin API at the world's time: the exchange as shown, and the raw answer. */
  send = async (name: string, ask: AdminAsk): Promise<AdminExchange> => {
    const body =
      ask.body === undefined ? undefined : typeof ask.body === 'string' ? ask.body : JSON.stringify(ask.body);
    const headers: Record<string, string> = {
      ...(body !== undefined && typeof ask.body !== 'string' && { 'content-type': 'application/json' }),
      ...ask.headers,
    };
    const path = `/v1${ask.target}`;
    const split = path.indexOf('?');
    const request: AdminRequest = {
      method: ask.method,
      path: split < 0 ? path : path.slice(0, split),
      query: split < 0 ? '' : path.slice(split + 1),
      headers,
      body: Buffer.from(body ?? ''),
      principal: ask.unsigned ? undefined : PRINCIPAL,
    };
    this.#standIns.keep(`${path} ${body ?? ''}`);
    const response = await (ask.tablesDown ? this.#down : this.#handle)(request);
    this.#standIns.learn(response.body);
    return { shown: this.#shown(name, ask, { path, headers, body }, response), raw: response.body };
  };

  #shown(
    name: string,
    ask: AdminAsk,
    sent: { path: string; headers: Record<string, string>; body: string | undefined },
    response: { status: number; headers: Record<string, string>; body: string },
  ): ShownExchange {
    const requestId = response.headers['x-request-id'] ?? '';
    const shownId = exampleRequestId(name);
    const show = (text: string) => this.#standIns.show(text).replaceAll(requestId, shownId);
    const signature: Record<string, string> = ask.unsigned
      ? {}
      : {
          authorization: `AWS4-HMAC-SHA256 Credential=…/${this.#now.toISOString().slice(0, 10).replaceAll('-', '')}/${REGION}/lambda/aws4_request, SignedHeaders=…, Signature=…`,
          'x-amz-date': `${this.#now.toISOString().replace(/[-:]/g, '').slice(0, 15)}Z`,
        };
    const target = show(sent.path).replace(
      /([?&]cursor=)([^&]+)/,
      (_, key: string, cursor: string) => `${key}${this.#standIns.cursor(decodeURIComponent(cursor))}`,
    );
    const answer = show(response.body).replace(
      /("next_cursor":")([^"]+)"/,
      (_, key: string, cursor: string) => `${key}${this.#standIns.cursor(cursor)}"`,
    );
    return {
      request: {
        method: ask.method,
        target,
        headers: { ...signature, ...sent.headers },
        body: sent.body === undefined ? undefined : show(sent.body),
      },
      status: response.status,
      headers: Object.fromEntries(
        Object.entries(response.headers)
          .map(([header, value]) => [header, show(value)] as const)
          .sort(([a], [b]) => a.localeCompare(b)),
      ),
      body: answer,
    };
  }
}
