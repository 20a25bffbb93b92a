/**
 * Time to live in the local DynamoDB, as DynamoDB has it: dynalite refuses UpdateTimeToLive and keeps every
 * item for ever, so the counters table's TTL (tables/schema.ts: a month's counters and the admin API's
 * idempotency records expire) was declared and never honoured locally: the counters' items only accumulated.
 *
 * - `UpdateTimeToLive` and `DescribeTimeToLive` are answered here, in front of dynalite, with DynamoDB's shapes
 *   and refusals (the table must exist; enabling twice, disabling twice, or another attribute while enabled is
 *   a ValidationException). The setting is kept in the store, so it survives restarts, and is forgotten with its
 *   table (a table created again under the same name starts without TTL, as on AWS).
 * - A sweep, as DynamoDB's own background deleter does it, through the DynamoDB protocol: it scans each table
 *   with TTL for items whose attribute is a number of seconds in the past (and not more than five years past:
 *   DynamoDB ignores those), and deletes each with the condition that the attribute still holds what the scan
 *   saw (an item written again meanwhile stays). Items whose attribute is missing or not a number never expire.
 *   The sweep runs soon after a start and then every `sweepMs`; like DynamoDB's, it is not instant: an item may
 *   be read after it expired and before a sweep.
 */
import { Agent, type IncomingMessage, type RequestListener, request, type ServerResponse } from 'node:http';
import aws4 from 'aws4';
import type { Store } from './dynamo-journal.js';

/** Between two sweeps. */
export const SWEEP_MS = 5 * 60_000;
/** DynamoDB does not delete items whose TTL lies more than five years in the past. */
const FIVE_YEARS_SECONDS = 5 * 365 * 24 * 3600;

const TARGET = 'DynamoDB_20120810.';
/** Where the store keeps a table's TTL setting (dynalite's own keys are `table~…`, `item-…~…`, `index-…`). */
const SETTING_PREFIX = 'ttl~';

interface Setting {
  attribute: string;
  /** The table's CreationDateTime when TTL was enabled: a table deleted and created again has none. */
  created: number;
}

interface Table {
  TableName: string;
  CreationDateTime: number;
  KeySchema: { AttributeName: string }[];
}

type Answer = { status: number; body: Record<string, unknown> };

const validation = (message: string): Answer => ({
  status: 400,
  body: { __type: 'com.amazon.coral.validate#ValidationException', message },
});

function send(res: ServerResponse, { status, body }: Answer): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/x-amz-json-1.0');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** The TTL settings of one local DynamoDB's store, and the two operations dynalite lacks. */
export class TimeToLive {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  #table(name: unknown): Promise<Table | Answer> {
    return new Promise((resolve) => {
      if (typeof name !== 'string' || !/^[a-zA-Z0-9_.-]{3,255}$/.test(name)) {
        resolve(validation("1 validation error detected: Value at 'tableName' failed to satisfy constraint"));
        return;
      }
      this.#store.getTable(name, false, (error, table) => {
        if (error)
          resolve({
            status: (error as { statusCode?: number }).statusCode ?? 500,
            body: (error as { body?: Record<string, unknown> }).body ?? { message: String(error) },
          });
        else resolve(table as Table);
      });
    });
  }

  /** The table's setting, if TTL is enabled on it (and it is the same table). */
  #setting(table: Table): Promise<Setting | undefined> {
    return new Promise((resolve, reject) => {
      this.#store.db.get(`${SETTING_PREFIX}${table.TableName}`, (error, value) => {
        if (error && error.name !== 'NotFoundError' && !/NotFound/.test(error.message)) reject(error);
        else {
          const setting = value as Setting | undefined;
          resolve(setting?.created === table.CreationDateTime ? setting : undefined);
        }
      });
    });
  }

  #save(table: string, setting: Setting | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (setting) this.#store.db.put(`${SETTING_PREFIX}${table}`, setting, done);
      else this.#store.db.del(`${SETTING_PREFIX}${table}`, done);
    });
  }

  async describe(input: Record<string, unknown>): Promise<Answer> {
    const table = await this.#table(input.TableName);
    if ('status' in table) return table;
    const setting = await this.#setting(table);
    return {
      status: 200,
      body: {
        TimeToLiveDescription: setting
          ? { TimeToLiveStatus: 'ENABLED', AttributeName: setting.attribute }
          : { TimeToLiveStatus: 'DISABLED' },
      },
    };
  }

  async update(input: Record<string, unknown>): Promise<Answer> {
    const specification = input.TimeToLiveSpecification as
      | { Enabled?: unknown; AttributeName?: unknown }
      | undefined;
    const { Enabled: enabled, AttributeName: attribute } = specification ?? {};
    if (typeof enabled !== 'boolean' || typeof attribute !== 'string' || attribute.length === 0) {
      return validation(
        'TimeToLiveSpecification needs Enabled (a boolean) and AttributeName (a non-empty string)',
      );
    }
    const table = await this.#table(input.TableName);
    if ('status' in table) return table;
    const setting = await this.#setting(table);
    if (enabled && setting) return validation('TimeToLive is already enabled');
    if (!enabled && !setting) return validation('TimeToLive is already disabled');
    if (!enabled && setting?.attribute !== attribute) {
      return validation(`TimeToLive is enabled on another attribute: ${setting?.attribute}`);
    }
    await this.#save(table.TableName, enabled ? { attribute, created: table.CreationDateTime } : undefined);
    return { status: 200, body: { TimeToLiveSpecification: { Enabled: enabled, AttributeName: attribute } } };
  }

  /** dynalite's request listener, with the two TTL operations answered here. */
  front(dynalite: RequestListener): RequestListener {
    return (req, res) => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const operation = target.startsWith(TARGET) ? target.slice(TARGET.length) : '';
      if (req.method !== 'POST' || (operation !== 'UpdateTimeToLive' && operation !== 'DescribeTimeToLive')) {
        dynalite(req, res);
        return;
      }
      void this.#answer(req, operation).then(
        (answer) => send(res, answer),
        (error: unknown) =>
          send(res, { status: 500, body: { __type: 'InternalFailure', message: String(error) } }),
      );
    };
  }

  async #answer(req: IncomingMessage, operation: 'UpdateTimeToLive' | 'DescribeTimeToLive'): Promise<Answer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (!String(req.headers.authorization ?? '').startsWith('AWS4-')) {
      return {
        status: 400,
        body: {
          __type: 'com.amazon.coral.service#MissingAuthenticationTokenException',
          message: 'Request is missing Authentication Token',
        },
      };
    }
    let input: Record<string, unknown>;
    try {
      input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return { status: 400, body: { __type: 'com.amazon.coral.service#SerializationException' } };
    }
    return operation === 'UpdateTimeToLive' ? this.update(input) : this.describe(input);
  }
}

/** One DynamoDB call over the protocol (the sweep is a client, as DynamoDB's deleter is). */
type Call = (operation: string, input: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** One request to `url`, signed by `aws4` (the local DynamoDB checks that requests are signed, not by whom). */
function post(url: URL, agent: Agent, headers: Record<string, string>, body: string) {
  const signed = aws4.sign(
    { host: url.host, path: '/', method: 'POST', service: 'dynamodb', region: 'us-east-1', headers, body },
    { accessKeyId: 'local-ttl-sweep', secretAccessKey: 'local-ttl-sweep' },
  );
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const sent = request(url, { method: 'POST', agent, headers: signed.headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

function caller(endpoint: string): { call: Call; close: () => Promise<void> } {
  const url = new URL('/', endpoint);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const call: Call = async (operation, input) => {
    const headers = { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `${TARGET}${operation}` };
    const response = await post(url, agent, headers, JSON.stringify(input));
    const body = JSON.parse(response.text || '{}') as Record<string, unknown>;
    if (response.status !== 200) {
      throw Object.assign(new Error(String(body.message ?? body.__type)), {
        type: String(body.__type ?? ''),
      });
    }
    return body;
  };
  return { call, close: async () => agent.destroy() };
}

type Item = Record<string, { N?: string }>;

/** Delete the expired items of one table; returns how many were deleted. */
async function sweepTable(call: Call, table: Table, attribute: string, now: number): Promise<number> {
  let deleted = 0;
  let start: unknown;
  do {
    const page = await call('Scan', {
      TableName: table.TableName,
      FilterExpression: '#ttl < :now AND #ttl >= :oldest',
      ExpressionAttributeNames: { '#ttl': attribute },
      ExpressionAttributeValues: {
        ':now': { N: String(now) },
        ':oldest': { N: String(now - FIVE_YEARS_SECONDS) },
      },
      ...(start ? { ExclusiveStartKey: start } : {}),
    });
    for (const item of (page.Items ?? []) as Item[]) {
      const key = Object.fromEntries(
        table.KeySchema.map(({ AttributeName }) => [AttributeName, item[AttributeName]]),
      );
      try {
        await call('DeleteItem', {
          TableName: table.TableName,
          Key: key,
          ConditionExpression: '#ttl = :seen',
          ExpressionAttributeNames: { '#ttl': attribute },
          ExpressionAttributeValues: { ':seen': item[attribute] },
        });
        deleted++;
      } catch (error) {
        // Written again since the scan: it stays.
        if (!(error as { type?: string }).type?.endsWith('ConditionalCheckFailedException')) throw error;
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return deleted;
}

/** One sweep of every table with TTL on the local DynamoDB at `endpoint`; returns the items deleted. */
export async function sweepExpired(endpoint: string, now = Math.floor(Date.now() / 1000)): Promise<number> {
  const { call, close } = caller(endpoint);
  let deleted = 0;
  try {
    const { TableNames = [] } = (await call('ListTables', {})) as { TableNames?: string[] };
    for (const name of TableNames) {
      const { TimeToLiveDescription: ttl } = (await call('DescribeTimeToLive', { TableName: name })) as {
        TimeToLiveDescription?: { TimeToLiveStatus?: string; AttributeName?: string };
      };
      if (ttl?.TimeToLiveStatus !== 'ENABLED' || !ttl.AttributeName) continue;
      const { Table: table } = (await call('DescribeTable', { TableName: name })) as { Table: Table };
      deleted += await sweepTable(call, table, ttl.AttributeName, now);
    }
  } finally {
    await close();
  }
  return deleted;
}

/**
 * Sweep soon after the start and every `sweepMs`, while the server listens (a failed sweep is tried again at
 * the next; nothing is lost by waiting). Returns what stops it.
 */
export function sweepEvery(options: {
  endpoint: string;
  listening: () => boolean;
  sweepMs?: number;
}): () => Promise<void> {
  const { endpoint, listening, sweepMs = SWEEP_MS } = options;
  let running: Promise<unknown> = Promise.resolve();
  const sweep = () => {
    if (!listening()) return;
    running = running.then(() => sweepExpired(endpoint)).catch(() => {});
  };
  const first = setTimeout(sweep, Math.min(sweepMs, 5_000));
  const timer = setInterval(sweep, sweepMs);
  first.unref();
  timer.unref();
  return async () => {
    clearTimeout(first);
    clearInterval(timer);
    await running;
  };
}
