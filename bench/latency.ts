/**
 * Section 9: latency as on AWS. The delaying TCP proxy of the fault tests (test/helpers/slow-proxy.ts) sits in
 * front of the stack's s3rver and dynalite and adds in-region service latencies (default: S3 15 ms to the
 * first byte, DynamoDB 4 ms); the production wiring (createProxy over loadConfig) answers warm requests
 * through it, on the request path's one client (lean signed requests): hot ones, held by the byte cache, and
 * warm misses — cursor pages the container has not read (its key and pointer known: one ranged read, made
 * while the request is metered). A last table times the two hot calls alone, one after the other and at once.
 *
 * Since issue 40 the handler makes a miss's read and its metering write at the same time (proxy/core/handler.ts):
 * a miss costs the slower of the two round trips, not their sum; a read that fails after the meter admitted
 * the request has its count taken back (QuotaMeter.refund), so a 503 is still not counted. A request served
 * from the byte cache reads nothing and costs about one DynamoDB round trip, as before.
 */
import { createProxy } from '../proxy/app.js';
import { loadConfig } from '../proxy/config.js';
import type { ProxyHandler, ProxyResponse } from '../proxy/core/types.js';
import { type SlowProxy, startSlowProxy } from '../test/helpers/slow-proxy.js';
import type { Stack } from './e2e.js';
import { hotCalls, putBenchObject } from './lean.js';
import { AUTH, type Picks } from './mix.js';
import { progress, type SectionResult } from './report.js';
import { fmt, percentile, table } from './stats.js';

interface Kind {
  label: string;
  target: string;
  headers: Record<string, string>;
  status: number;
}

function call(handle: ProxyHandler, target: string, headers: Record<string, string>): Promise<ProxyResponse> {
  const q = target.indexOf('?');
  return handle({
    method: 'GET',
    path: q < 0 ? target : target.slice(0, q),
    query: q < 0 ? '' : target.slice(q + 1),
    headers: { ...AUTH, ...headers },
  });
}

const portOf = (endpoint: string) => Number(new URL(endpoint).port);

function envInteger(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  const value = raw ? Number(raw) : fallback;
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name}=${raw}: expected an integer ≥ 0`);
  return value;
}

const summary = (times: number[]) => {
  const sorted = Float64Array.from(times).sort();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
};

/** The request kinds, with their cursors and entity tags obtained through `handle`. */
async function kindsOf(handle: ProxyHandler, picks: Picks): Promise<Kind[]> {
  const list = `/v1/modules?manufacturer_id=${picks.bigMaker}&sort=name`;
  const first = await call(handle, list, {});
  if (first.status !== 200) throw new Error(`${list}: ${first.status} ${first.body?.toString()}`);
  const cursor = (JSON.parse(first.body!.toString()) as { page: { next_cursor: string | null } }).page
    .next_cursor;
  if (!cursor) throw new Error(`${list} has a single page; pick a bigger manufacturer`);
  const cursorPage = `${list}&cursor=${cursor}`;
  const detail = `/v1/modules/${picks.moduleId}`;
  const etag = async (target: string) => (await call(handle, target, {})).headers.etag!;
  return [
    { label: 'hot first page (filtered, sorted)', target: list, headers: {}, status: 200 },
    { label: 'cursor page', target: cursorPage, headers: {}, status: 200 },
    { label: 'module detail', target: detail, headers: {}, status: 200 },
    { label: '304, first page', target: list, headers: { 'if-none-match': await etag(list) }, status: 304 },
    {
      label: '304, cursor page',
      target: cursorPage,
      headers: { 'if-none-match': await etag(cursorPage) },
      status: 304,
    },
    { label: '304, detail', target: detail, headers: { 'if-none-match': await etag(detail) }, status: 304 },
  ];
}

const MISS = 'warm miss: a cursor page not read yet';

/**
 * Up to `count` cursor pages of the modules of the most common width by name, 100 a page (each page a range of
 * its own: two segments), walked through `handle`; a variant the stack publishes in either mode (e2e.ts).
 */
async function cursorPages(handle: ProxyHandler, picks: Picks, count: number): Promise<string[]> {
  const list = `/v1/modules?hp=${picks.hp}&sort=name&limit=100`;
  const pages: string[] = [];
  let target = list;
  while (pages.length < count) {
    const page = await call(handle, target, {});
    const cursor = (JSON.parse(page.body!.toString()) as { page: { next_cursor: string | null } }).page
      .next_cursor;
    if (!cursor) break;
    target = `${list}&cursor=${cursor}`;
    pages.push(target);
  }
  return pages;
}

export async function benchLatency(stack: Stack, picks: Picks): Promise<SectionResult> {
  const s3Ms = envInteger('BENCH_S3_LATENCY_MS', 15);
  const dynamoMs = envInteger('BENCH_DYNAMODB_LATENCY_MS', 4);
  const calls = envInteger('BENCH_LATENCY_CALLS', 200);
  let slowS3: SlowProxy | undefined;
  let slowDynamo: SlowProxy | undefined;
  try {
    // The proxy delays each chunk in each direction: half the round trip each way.
    slowS3 = await startSlowProxy({ targetPort: portOf(stack.s3Endpoint), delayMs: s3Ms / 2 });
    slowDynamo = await startSlowProxy({ targetPort: portOf(stack.dynamoEndpoint), delayMs: dynamoMs / 2 });
    await putBenchObject(stack.s3Endpoint);

    // Each hot call alone, and both one after the other or at once (lean client).
    progress(`9. the hot calls alone and together through the delaying proxies (${calls} each)`);
    const bare = hotCalls('lean', slowS3.endpoint, slowDynamo.endpoint);
    const alone = {
      get: [] as number[],
      meter: [] as number[],
      sequential: [] as number[],
      overlapped: [] as number[],
    };
    try {
      const time = async (into: number[], run: () => Promise<unknown>) => {
        const started = performance.now();
        await run();
        into.push(performance.now() - started);
      };
      for (let i = 0; i < 10; i++) await Promise.all([bare.get(), bare.meter()]);
      for (let i = 0; i < calls; i++) {
        await time(alone.get, () => bare.get());
        await time(alone.meter, () => bare.meter());
        await time(alone.sequential, async () => {
          await bare.get();
          await bare.meter();
        });
        await time(alone.overlapped, () => Promise.all([bare.get(), bare.meter()]));
      }
    } finally {
      await bare.close();
    }

    const rows: (string | number)[][] = [];
    const figures: Record<string, { p50: number; p99: number }> = {};
    {
      const config = loadConfig({
        ...stack.env,
        S3_ENDPOINT: slowS3.endpoint,
        DYNAMODB_ENDPOINT: slowDynamo.endpoint,
      });
      const handle = createProxy(config, { log: () => {} });
      const kinds = await kindsOf(handle, picks);
      for (const kind of kinds) for (let i = 0; i < 5; i++) await call(handle, kind.target, kind.headers);
      // Cursor pages this container has never read, walked by another (its own byte cache).
      const misses = await cursorPages(createProxy(config, { log: () => {} }), picks, calls);
      progress(
        `9. ${calls} warm requests of each of ${kinds.length} kinds and ${misses.length} warm misses, interleaved`,
      );
      const times = kinds.map(() => [] as number[]);
      const missTimes: number[] = [];
      for (let i = 0; i < calls; i++) {
        for (const [k, kind] of kinds.entries()) {
          const started = performance.now();
          const response = await call(handle, kind.target, kind.headers);
          times[k]!.push(performance.now() - started);
          if (response.status !== kind.status)
            throw new Error(`${kind.label}: ${response.status} ${response.body?.toString()}`);
        }
        const miss = misses[i];
        if (miss) {
          const started = performance.now();
          const response = await call(handle, miss, {});
          missTimes.push(performance.now() - started);
          if (response.status !== 200)
            throw new Error(`warm miss: ${response.status} ${response.body?.toString()}`);
        }
      }
      kinds.forEach((kind, k) => {
        const s = summary(times[k]!);
        figures[kind.label] = s;
        rows.push([kind.label, fmt.ms(s.p50), fmt.ms(s.p99)]);
      });
      const s = summary(missTimes);
      figures[MISS] = s;
      rows.push([`${MISS} (${missTimes.length})`, fmt.ms(s.p50), fmt.ms(s.p99)]);
    }

    const a = Object.fromEntries(Object.entries(alone).map(([k, v]) => [k, summary(v)])) as Record<
      keyof typeof alone,
      { p50: number; p99: number }
    >;
    const markdown = [
      `The stack's s3rver and dynalite behind test/helpers/slow-proxy.ts (in the bench process), each chunk held ${s3Ms / 2} ms each way for S3 and ${dynamoMs / 2} ms each way for DynamoDB: about ${s3Ms} ms and ${dynamoMs} ms per round trip on top of the local servers' own time (BENCH_S3_LATENCY_MS, BENCH_DYNAMODB_LATENCY_MS). ` +
        `The proxy is \`createProxy(loadConfig())\` in the bench process (key cache 30 s, pointer re-check every 5 s: those re-checks are in the p99), warmed with 5 requests per kind, then ${calls} rounds of one request of each kind, interleaved; handler time per request.`,
      '',
      table(['request (warm)', 'p50 ms', 'p99 ms'], rows),
      '',
      'The hot calls alone through the same delaying proxies (lean client, ranged 8 KiB GET and one meter() UpdateItem), one after the other (the handler before issue 40) and at once (a miss since issue 40):',
      '',
      table(
        ['calls', 'p50 ms', 'p99 ms'],
        [
          ['S3 ranged GET alone', fmt.ms(a.get.p50), fmt.ms(a.get.p99)],
          ['meter() UpdateItem alone', fmt.ms(a.meter.p50), fmt.ms(a.meter.p99)],
          ['GET, then UpdateItem (before issue 40)', fmt.ms(a.sequential.p50), fmt.ms(a.sequential.p99)],
          ['GET and UpdateItem at once', fmt.ms(a.overlapped.p50), fmt.ms(a.overlapped.p99)],
          [
            'saved by overlapping',
            fmt.ms(a.sequential.p50 - a.overlapped.p50),
            fmt.ms(a.sequential.p99 - a.overlapped.p99),
          ],
        ],
      ),
      '',
      `A warm miss reads its range while it is metered: its p50 above is ${fmt.ms(figures[MISS]?.p50 ?? Number.NaN)} ms, against ${fmt.ms(a.get.p50)} ms for the ranged GET alone and ${fmt.ms(a.sequential.p50)} ms for the two calls one after the other; a request served from memory (a cursor page's 304, and with a byte cache every warm hot page) reads nothing and costs about one DynamoDB round trip. ` +
        'A read that fails after the meter admitted the request has its count taken back (one more write, on that path only), so a 503 is still not counted; bench/miss-ab.ts compares two assets of the function side by side on warm misses.',
      '',
    ].join('\n');
    const firstPage = figures['hot first page (filtered, sorted)'];
    const miss = figures[MISS];
    return {
      markdown,
      commands: [],
      targets: [
        {
          name: `Warm hot first page with S3 ${s3Ms} ms, DynamoDB ${dynamoMs} ms injected (lean)`,
          target: 'about one DynamoDB round trip (byte cache)',
          measured: `p50 ${fmt.ms(firstPage?.p50 ?? Number.NaN)} ms, p99 ${fmt.ms(firstPage?.p99 ?? Number.NaN)} ms`,
          ok: firstPage ? firstPage.p50 < s3Ms : undefined,
        },
        {
          name: `Warm miss (a cursor page not read yet) with S3 ${s3Ms} ms, DynamoDB ${dynamoMs} ms injected`,
          target: 'p50 within 1.2× the S3 GET alone (one round trip, not two)',
          measured: `p50 ${fmt.ms(miss?.p50 ?? Number.NaN)} ms (GET alone ${fmt.ms(a.get.p50)} ms, both one after the other ${fmt.ms(a.sequential.p50)} ms), p99 ${fmt.ms(miss?.p99 ?? Number.NaN)} ms`,
          ok: miss ? miss.p50 <= 1.2 * a.get.p50 : undefined,
        },
      ],
      data: { sequentialP50: a.sequential.p50, overlappedP50: a.overlapped.p50 },
    };
  } finally {
    await slowS3?.close();
    await slowDynamo?.close();
  }
}
