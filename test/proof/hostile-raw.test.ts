/**
 * Hostile HTTP/1.1 on raw sockets against the real node:http adapter and the real core (test/oracle/hostile.ts
 * `rawHttpCases`): request smuggling shapes, oversize heads and URLs, CONNECT, broken request lines and
 * versions, pipelining with a bad request behind good ones, repeated Host and Authorization. For each case:
 * exactly the answers owed, in order; every error in the envelope with the `req_` id of its X-Request-Id; one
 * log line per answer and none for anything unanswered; the quota meter counts exactly the answers that carry
 * rate-limit headers (nothing counted that was not answered); and the server keeps serving.
 */
import type { Server } from 'node:http';
import { createConnection } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../proxy/adapters/http.js';
import type { RequestLogLine } from '../../proxy/core/types.js';
import type { Admission, MeterOutcome, QuotaMeter } from '../../proxy/quota/interface.js';
import { MemoryQuotaMeter } from '../../proxy/quota/memory.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import type { KeyRecord } from '../../tables/keys.js';
import { closeServer, listenOnLoopback } from '../helpers/loopback.js';
import { snapshotArb } from '../oracle/arbitraries.js';
import { envelopeProblem, errorCodeOf, PARTNER_KEY, putCatalogue, testProxy } from '../oracle/harness.js';
import { type RawAnswer, rawHttpCases } from '../oracle/hostile.js';

/** Counts the requests it admitted (and did not take back). */
class CountingMeter implements QuotaMeter {
  readonly #inner = new MemoryQuotaMeter();
  admitted = 0;

  async meter(key: KeyRecord, now: Date): Promise<MeterOutcome> {
    const result = await this.#inner.meter(key, now);
    if (result.ok) this.admitted++;
    return result;
  }

  async refund(key: KeyRecord, now: Date, admission: Admission): Promise<void> {
    await this.#inner.refund(key, now, admission);
    this.admitted--;
  }
}

interface Received {
  status: number;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

const meter = new CountingMeter();
const logs: RequestLogLine[] = [];
let server: Server;
let port: number;

beforeAll(async () => {
  const snapshot = fc.sample(snapshotArb({ minModules: 5, maxModules: 10 }), { numRuns: 1, seed: 7 })[0]!;
  const objects = new MemoryObjectStore();
  await putCatalogue(objects, snapshot);
  const log = (line: RequestLogLine) => logs.push(line);
  server = createHttpServer(testProxy({ objects, quota: meter, log }), { log });
  port = await listenOnLoopback(server);
});

afterAll(() => closeServer(server));

/** Write `bytes` at once on a fresh connection; everything received until the server closes it. */
function exchange(bytes: string, end: boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    // Keep-alive connections stay open once every answer is out: close from this side once the server
    // has been quiet for a moment.
    let timer = setTimeout(() => socket.end(), 400);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      clearTimeout(timer);
      timer = setTimeout(() => socket.end(), 250);
    });
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    socket.write(Buffer.from(bytes, 'latin1'));
    if (end) socket.end();
  });
}

/** Split a byte stream of HTTP/1.1 responses (Content-Length framed; HEAD answers have no body). */
function parseResponses(bytes: Buffer, expected: readonly RawAnswer[]): Received[] {
  const answers: Received[] = [];
  let at = 0;
  while (at < bytes.byteLength) {
    const headEnd = bytes.indexOf('\r\n\r\n', at);
    if (headEnd < 0)
      throw new Error(`a partial answer: ${bytes.subarray(at).toString('latin1').slice(0, 200)}`);
    const [statusLine = '', ...lines] = bytes.subarray(at, headEnd).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
    const head = expected[answers.length]?.head === true;
    const length = head ? 0 : Number(headers['content-length'] ?? 0);
    const body = length > 0 ? bytes.subarray(headEnd + 4, headEnd + 4 + length) : undefined;
    answers.push({ status, headers, body });
    at = headEnd + 4 + length;
  }
  return answers;
}

const table = rawHttpCases(`Bearer ${PARTNER_KEY}`);
const summary: string[] = [];

afterAll(() => {
  console.log(`raw HTTP cases:\n${summary.join('\n')}`);
});

describe.each(table)('raw socket: $name', ({ name, bytes, answers: expected, end }) => {
  it(`answers ${expected.map((a) => `${a.status}${a.code ? ` ${a.code}` : ''}`).join(', ')}; counts only what it answered`, async () => {
    const admittedBefore = meter.admitted;
    const logsBefore = logs.length;

    const received = parseResponses(await exchange(bytes, end ?? false), expected);

    // A HEAD answer has no body, so no code to compare.
    const shape = received.map((r) => ({
      status: r.status,
      ...(r.status >= 400 && r.body ? { code: errorCodeOf(r) } : {}),
    }));
    expect(shape).toEqual(
      expected.map(({ status, code, head }) => ({ status, ...(code && !head ? { code } : {}) })),
    );
    for (const [i, answer] of received.entries()) {
      expect(answer.headers['x-request-id']).toMatch(/^req_[A-Za-z0-9_-]+$/);
      if (answer.status >= 400 && !expected[i]?.head) expect(envelopeProblem(answer)).toBeUndefined();
      if (answer.status === 405) expect(answer.headers.allow).toBe('GET, HEAD, OPTIONS');
    }
    // Metered exactly the answers that say so (rate-limit headers), nothing that was never sent.
    const meteredAnswers = received.filter((r) => r.headers['x-ratelimit-limit-minute'] !== undefined);
    expect(meter.admitted - admittedBefore).toBe(meteredAnswers.length);
    // One log line per answer, with its request id and status; none for what was not answered.
    const lines = logs.slice(logsBefore);
    expect(lines.map((l) => [l.request_id, l.status]).sort()).toEqual(
      received.map((r) => [r.headers['x-request-id'], r.status]).sort(),
    );
    summary.push(`| ${name} | ${shape.map((s) => `${s.status}${s.code ? ` ${s.code}` : ''}`).join(', ')} |`);
  });
});

describe('after every raw case', () => {
  it('still serves a plain request on a new connection', async () => {
    const received = parseResponses(
      await exchange(
        `GET /v1/tags HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer ${PARTNER_KEY}\r\nConnection: close\r\n\r\n`,
        false,
      ),
      [{ status: 200 }],
    );

    expect(received.map((r) => r.status)).toEqual([200]);
  });
});
