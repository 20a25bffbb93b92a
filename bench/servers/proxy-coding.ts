/**
 * Bench server for section 6 (content coding): the proxy over the rendered catalogue in a MemoryObjectStore,
 * twice — `hot` with a byte cache (coded answers compressed once, then served from the cache) and `cold` with
 * `BYTE_CACHE_MB=0` (every coded answer compressed per request) — each behind its own node:http server.
 * Commands: `handler-cost` (the core alone, in-process, CPU per call) and `cpu` (this process, from child.ts).
 * argv: <snapshot directory>
 */
import { loadSnapshot } from '../../builder/snapshot/load.js';
import { createHttpServer } from '../../proxy/adapters/http.js';
import type { ProxyHandler } from '../../proxy/core/types.js';
import { listen, main, onCommand, ready } from './child.js';
import { catalogueInMemory, memoryProxy } from './memory-catalogue.js';

main(async () => {
  const source = process.argv[2]!;
  const loaded = await loadSnapshot(source);
  if (!loaded.ok) throw new Error(`snapshot ${source} does not validate`);
  const { objects } = await catalogueInMemory(loaded.snapshot);

  const proxy = (byteCacheMb: string): ProxyHandler => memoryProxy(objects, { BYTE_CACHE_MB: byteCacheMb });
  const handlers = { hot: proxy('64'), cold: proxy('0') };
  const ports = {
    hot: await listen(createHttpServer(handlers.hot)),
    cold: await listen(createHttpServer(handlers.cold)),
  };

  // The core alone, without HTTP: one request `iterations` times in sequence, CPU and bytes per call.
  onCommand('handler-cost', async (message) => {
    const handle = handlers[message.cache === 'cold' ? 'cold' : 'hot'];
    const path = String(message.path);
    const q = path.indexOf('?');
    const call = {
      method: 'GET',
      path: q < 0 ? path : path.slice(0, q),
      query: q < 0 ? '' : path.slice(q + 1),
      headers: message.headers as Record<string, string>,
    };
    const iterations = Number(message.iterations);
    for (let i = 0; i < Math.min(50, iterations); i++) await handle(call); // warm (and fill the cache)
    let bytes = 0;
    const cpu = process.cpuUsage();
    for (let i = 0; i < iterations; i++) bytes = (await handle(call)).body?.byteLength ?? 0;
    const used = process.cpuUsage(cpu);
    return { cpuUs: (used.user + used.system) / iterations, bytes };
  });
  ready({ hotPort: ports.hot, coldPort: ports.cold });
});
