/**
 * The local peer: the read API as a dynamic server would make it — fastify 5 over PostgreSQL 15, every answer
 * computed per request: the key looked up (cached 30 s, as the proxy caches it), one `UPDATE … RETURNING` on the
 * key's quota row (exact per-minute and per-month limits, as the proxy's one conditional write), then one or two
 * queries, the record objects built and serialised, an ETag hashed from the body (304 when it matches).
 * Same routes, parameters, cursors-as-opaque-strings and answers as the product (bench section 14 checks the
 * data of every request of its mixes against npm start's), for the catalogue the bench loads (bench/postgres.ts).
 * argv: <PostgreSQL port on 127.0.0.1> <database user>
 */
import { createHash } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import pg from 'pg';
import { MODULE_FIELDS, MODULE_RELATIONS } from '../../store/schema.js';
import { main, onStop, ready } from './child.js';

type Row = Record<string, unknown>;
type Query = Record<string, string | undefined>;

/** A refusal in the product's error envelope. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(code);
  }
}

interface Key {
  keyId: string;
  minute: number;
  month: number;
}

/** Per list endpoint: its table, its columns, its filters. */
const LISTS = {
  modules: {
    table: 'modules',
    fields: MODULE_FIELDS as readonly string[],
    filters: ['manufacturer_id', 'hp', 'standard', 'tag'],
  },
  manufacturers: { table: 'manufacturers', fields: ['id', 'name', 'country'], filters: [] },
  standards: { table: 'standards', fields: ['id', 'name', 'height_mm'], filters: [] },
  tags: { table: 'tags', fields: ['id', 'name', 'type'], filters: [] },
} as const;
type ListName = keyof typeof LISTS;

const KEY_CACHE_MS = 30_000;
const POSITIVE = /^[1-9][0-9]{0,15}$/;
const NONNEGATIVE = /^(0|[1-9][0-9]{0,15})$/;

function integer(value: string | undefined, pattern: RegExp): number | undefined {
  if (value === undefined) return undefined;
  if (!pattern.test(value)) throw new Refusal(400, 'invalid_parameter');
  return Number(value);
}

function names(value: string | undefined, allowed: readonly string[]): string[] {
  if (value === undefined) return [];
  const list = value.split(',');
  if (list.some((name) => !allowed.includes(name))) throw new Refusal(400, 'invalid_parameter');
  return list;
}

class Peer {
  readonly #pool: pg.Pool;
  readonly #keys = new Map<string, { key: Key | undefined; until: number }>();

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async #key(header: string | undefined): Promise<Key> {
    const bearer = /^Bearer (pk_live_[A-Za-z0-9_-]{22})$/.exec(header ?? '');
    if (!bearer) throw new Refusal(401, header ? 'malformed_authorization' : 'missing_authorization');
    const hash = createHash('sha256').update(bearer[1]!).digest('hex');
    let cached = this.#keys.get(hash);
    if (!cached || cached.until < Date.now()) {
      const { rows } = await this.#pool.query(
        'SELECT key_id, limit_minute, limit_month FROM api_keys WHERE key_hash = $1',
        [hash],
      );
      const row = rows[0] as Row | undefined;
      const key = row && {
        keyId: String(row.key_id),
        minute: Number(row.limit_minute),
        month: Number(row.limit_month),
      };
      cached = { key, until: Date.now() + KEY_CACHE_MS };
      this.#keys.set(hash, cached);
    }
    if (!cached.key) throw new Refusal(401, 'invalid_key');
    return cached.key;
  }

  /** One UPDATE … RETURNING: counted, or refused when either window is full. */
  async #meter(key: Key, now: Date): Promise<Record<string, string>> {
    const minute = Math.floor(now.getTime() / 60_000) * 60;
    const month = now.toISOString().slice(0, 7);
    const { rows } = await this.#pool.query(
      `UPDATE quota SET
         minute_count = CASE WHEN minute = $2 THEN minute_count + 1 ELSE 1 END, minute = $2,
         month_count = CASE WHEN month = $3 THEN month_count + 1 ELSE 1 END, month = $3
       WHERE key_id = $1 AND (minute <> $2 OR minute_count < $4) AND (month <> $3 OR month_count < $5)
       RETURNING minute_count, month_count`,
      [key.keyId, minute, month, key.minute, key.month],
    );
    const row = rows[0] as Row | undefined;
    if (!row) throw new Refusal(429, 'rate_limit_exceeded');
    return {
      'x-ratelimit-limit-month': String(key.month),
      'x-ratelimit-remaining-month': String(key.month - Number(row.month_count)),
      'x-ratelimit-limit-minute': String(key.minute),
      'x-ratelimit-remaining-minute': String(key.minute - Number(row.minute_count)),
      'x-ratelimit-reset': String(minute),
    };
  }

  /** A module as the API shows it: its fields in order (or `fields`), then the relations asked for. */
  static module(row: Row, fields: readonly string[], include: readonly string[]): Row {
    const record: Row = {};
    for (const field of fields) record[field] = row[field];
    for (const relation of include) record[relation] = row[relation];
    return record;
  }

  async moduleDetail(id: number, query: Query): Promise<Row> {
    const include = names(query.include, MODULE_RELATIONS);
    const { rows } = await this.#pool.query(
      `SELECT ${[...MODULE_FIELDS, ...include].join(', ')} FROM modules WHERE id = $1`,
      [id],
    );
    if (!rows[0]) throw new Refusal(404, 'not_found');
    return { data: Peer.module(rows[0] as Row, MODULE_FIELDS, include) };
  }

  async manufacturerDetail(id: number, query: Query): Promise<Row> {
    const include = names(query.include, ['modules']);
    const { rows } = await this.#pool.query('SELECT id, name, country FROM manufacturers WHERE id = $1', [
      id,
    ]);
    if (!rows[0]) throw new Refusal(404, 'not_found');
    const data = { ...(rows[0] as Row) };
    if (include.length > 0) {
      const modules = await this.#pool.query(
        `SELECT ${MODULE_FIELDS.join(', ')} FROM modules WHERE manufacturer_id = $1 ORDER BY id`,
        [id],
      );
      data.modules = modules.rows.map((row: Row) => Peer.module(row, MODULE_FIELDS, []));
    }
    return { data };
  }

  /** A page: keyset on (sort key, id) after the cursor's record, one row more to know whether a page follows. */
  async list(name: ListName, query: Query): Promise<Row> {
    const { table, fields, filters } = LISTS[name];
    const limit = integer(query.limit, POSITIVE) ?? 50;
    if (limit > 100) throw new Refusal(400, 'invalid_parameter');
    const sort = query.sort ?? 'id';
    if (sort !== 'id' && sort !== 'name') throw new Refusal(400, 'invalid_parameter');
    const isModules = name === 'modules';
    // Record keys: id ∪ fields ∪ includes, in the record's own order.
    const asked =
      isModules && query.fields ? new Set(['id', ...names(query.fields, MODULE_FIELDS)]) : undefined;
    const shown = asked ? fields.filter((field) => asked.has(field)) : fields;
    const include = isModules ? names(query.include, MODULE_RELATIONS) : [];
    const where: string[] = [];
    const values: unknown[] = [];
    for (const filter of filters) {
      const value = integer(query[filter], filter === 'standard' ? NONNEGATIVE : POSITIVE);
      if (value === undefined) continue;
      values.push(value);
      where.push(
        filter === 'tag' ? `tag_ids @> ARRAY[$${values.length}::int]` : `${filter} = $${values.length}`,
      );
    }
    const sortKey = sort === 'name' ? 'name_rank' : 'id';
    const scope = `${name}|${sort}|${filters.map((f) => query[f] ?? '').join(',')}`;
    if (query.cursor !== undefined) {
      const after = Peer.cursorOf(query.cursor, scope);
      values.push(after.key, after.id);
      where.push(`(${sortKey}, id) > ($${values.length - 1}, $${values.length})`);
    }
    const columns = [...new Set(['id', sortKey, ...shown, ...include])];
    const { rows } = await this.#pool.query(
      `SELECT ${columns.join(', ')} FROM ${table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${sortKey}, id LIMIT ${limit + 1}`,
      values,
    );
    const page = (rows as Row[]).slice(0, limit);
    const last = page.at(-1);
    return {
      data: page.map((row) => Peer.module(row, shown, include)),
      page: {
        next_cursor:
          rows.length > limit && last ? Peer.cursor(scope, Number(last[sortKey]), Number(last.id)) : null,
      },
    };
  }

  static cursor(scope: string, key: number, id: number): string {
    return Buffer.from(JSON.stringify({ s: scope, k: key, i: id })).toString('base64url');
  }

  static cursorOf(cursor: string, scope: string): { key: number; id: number } {
    try {
      const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
        s: string;
        k: number;
        i: number;
      };
      if (parsed.s === scope && Number.isSafeInteger(parsed.k) && Number.isSafeInteger(parsed.i)) {
        return { key: parsed.k, id: parsed.i };
      }
    } catch {
      // refused below
    }
    throw new Refusal(400, 'invalid_parameter');
  }

  /** Authenticate, meter, answer (200 or 304 by the body's ETag), as the product orders it. */
  async answer(request: FastifyRequest, reply: FastifyReply, body: (query: Query) => Promise<Row>) {
    try {
      const key = await this.#key(request.headers.authorization);
      const headers = await this.#meter(key, new Date());
      const text = JSON.stringify(await body(request.query as Query));
      const etag = `"${createHash('sha1').update(text).digest('base64url')}"`;
      reply.headers({ ...headers, etag, 'cache-control': 'private, no-cache' });
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type('application/json').send(text);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      return reply
        .code(error.status)
        .type('application/json')
        .send(
          JSON.stringify({
            error: { code: error.code, message: error.code, request_id: `req_${request.id}` },
          }),
        );
    }
  }
}

main(async () => {
  const [port, user] = process.argv.slice(2);
  const pool = new pg.Pool({ host: '127.0.0.1', port: Number(port), user, database: 'catalogue', max: 10 });
  onStop(() => pool.end());
  const peer = new Peer(pool);
  const app = Fastify({ logger: false });
  const id = (request: FastifyRequest) => {
    const value = (request.params as { id: string }).id;
    if (!POSITIVE.test(value)) throw new Refusal(400, 'invalid_parameter');
    return Number(value);
  };
  app.get('/v1/modules/:id', (request, reply) =>
    peer.answer(request, reply, (query) => peer.moduleDetail(id(request), query)),
  );
  app.get('/v1/manufacturers/:id', (request, reply) =>
    peer.answer(request, reply, (query) => peer.manufacturerDetail(id(request), query)),
  );
  for (const name of Object.keys(LISTS) as ListName[]) {
    app.get(`/v1/${name}`, (request, reply) =>
      peer.answer(request, reply, (query) => peer.list(name, query)),
    );
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  onStop(() => app.close());
  const address = app.server.address();
  ready({ port: typeof address === 'object' && address ? address.port : 0 });
});
