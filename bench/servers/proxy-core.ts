/**
 * Bench server (a): the proxy core behind the node:http adapter, wired by the real factory (proxy/app.ts
 * createProxy) with its default JSON request log on stdout (the parent points stdout at /dev/null, so each log
 * line is still built and written). The catalogue is a published directory read through a
 * DirectoryObjectStore, as a container reads S3: what a request needs is read once, then served from the byte
 * cache (no reads at all once warm), so the process holds what a container holds, not the whole catalogue.
 * Keys are in memory behind the container's key cache; the quota meter is in memory with huge limits.
 * argv: <published directory>
 */
import { createHttpServer } from '../../proxy/adapters/http.js';
import { DirectoryObjectStore } from '../../store/objects/directory.js';
import { listen, main, onCommand, ready } from './child.js';
import { memoryProxy } from './memory-catalogue.js';

main(async () => {
  const handle = memoryProxy(new DirectoryObjectStore(process.argv[2]!));
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
  ready({ port });
});
