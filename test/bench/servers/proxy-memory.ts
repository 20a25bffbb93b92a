/**
 * Bench server (a): the proxy core behind the node:http adapter, with in-memory stores — the rendered
 * objects in a MemoryObjectStore, one partner key in a MemoryKeyStore, a MemoryQuotaMeter with huge limits.
 * The real factory (proxy/app.ts createProxy) wires it, with its default JSON request log on stdout
 * (the parent points stdout at /dev/null, so each log line is still built and written).
 * argv: <snapshot directory>
 */
import { loadSnapshot } from '../../../builder/load.js';
import { createHttpServer } from '../../../proxy/adapters/http.js';
import { listen, main, onCommand, ready } from './child.js';
import { catalogueInMemory, memoryProxy } from './memory-catalogue.js';

main(async () => {
  const started = performance.now();
  const source = process.argv[2]!;
  const loaded = await loadSnapshot(source);
  if (!loaded.ok) throw new Error(`snapshot ${source} does not validate`);
  const { objects, bytes } = await catalogueInMemory(loaded.snapshot);

  const handle = memoryProxy(objects);
  const port = await listen(createHttpServer(handle));

  // The core alone, without HTTP: each request `iterations` times in sequence, CPU and wall time per call.
  onCommand('handler-cost', async (message) => {
    const requests = message.requests as { path: string; headers: Record<string, string> }[];
    const iterations = Number(message.iterations);
    const costs = [];
    for (const request of requests) {
      const q = request.path.indexOf('?');
      const call = {
        method: 'GET',
        path: q < 0 ? request.path : request.path.slice(0, q),
        query: q < 0 ? '' : request.path.slice(q + 1),
        headers: request.headers,
      };
      for (let i = 0; i < Math.min(200, iterations); i++) await handle(call); // warm
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < iterations; i++) await handle(call);
      const wall = performance.now() - started;
      const used = process.cpuUsage(cpu);
      costs.push({ cpuUs: (used.user + used.system) / iterations, wallUs: (wall * 1000) / iterations });
    }
    return { costs };
  });
  ready({ port, objects: objects.size - 1, bytes, loadSeconds: (performance.now() - started) / 1000 });
});
