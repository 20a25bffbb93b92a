/**
 * The client's full walk of a generated catalogue's module list (limit 100), twice, with the ETag cache on
 * and off: wall time, requests, statuses and body bytes received. The proxy core serves the builder's output
 * from memory behind the node:http adapter in a child-free, same-process setup (client and server share one
 * event loop, so times are an upper bound for the client). Not part of `npm run bench` yet:
 *   BENCH_MODULES=25000 npx tsx bench/client-walk.ts
 */
import type { AddressInfo } from 'node:net';
import { generateSnapshot } from '../builder/synthetic/generate.js';
import { CatalogueClient } from '../client/index.js';
import { createHttpServer } from '../proxy/adapters/http.js';
import { catalogueInMemory, memoryProxy } from './servers/memory-catalogue.js';
import { BENCH_KEY } from './settings.js';

const modules = Number(process.env.BENCH_MODULES ?? 25_000);

const { objects } = await catalogueInMemory(generateSnapshot({ modules, seed: 1 }));
const server = createHttpServer(memoryProxy(objects, {}, { log: () => {} }));
await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

async function walk(client: CatalogueClient, statuses: Map<number, number>, bytes: { n: number }) {
  const started = performance.now();
  let records = 0;
  for await (const _module of client.modules.list({ limit: 100 })) records++;
  return { records, ms: performance.now() - started, statuses: Object.fromEntries(statuses), bytes: bytes.n };
}

// Warm up (JIT, sockets) with a walk that is not reported.
await walk(new CatalogueClient({ baseUrl, apiKey: BENCH_KEY, cache: false }), new Map(), { n: 0 });

for (const cache of [true, false]) {
  const statuses = new Map<number, number>();
  const bytes = { n: 0 };
  const client = new CatalogueClient({
    baseUrl,
    apiKey: BENCH_KEY,
    ...(cache ? {} : { cache: false as const }),
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      bytes.n += Number(response.headers.get('content-length') ?? 0);
      return response;
    },
  });
  for (const round of [1, 2]) {
    const before = { ...Object.fromEntries(statuses) };
    const bytesBefore = bytes.n;
    const result = await walk(client, statuses, bytes);
    const requests = Object.fromEntries(
      [...statuses]
        .map(([status, count]) => [status, count - (before[status] ?? 0)])
        .filter(([, count]) => count !== 0),
    );
    process.stdout.write(
      `cache ${cache ? 'on ' : 'off'} walk ${round}: ${result.records} modules, ${(result.ms / 1000).toFixed(2)} s, ` +
        `requests by status ${JSON.stringify(requests)}, body bytes on the wire ${((bytes.n - bytesBefore) / 1e6).toFixed(1)} MB\n`,
    );
  }
}
server.close();
