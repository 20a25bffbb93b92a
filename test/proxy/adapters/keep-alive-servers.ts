/**
 * The worker thread of http.keep-alive.test.ts: the adapter over the fixture core twice — as the adapter
 * sets it up, and with Node's default idle timeouts (advertised 5 s, held 6 s) as before — each kept busy by
 * a steady load on connections of its own, until the test says stop. In a thread of its own so that its
 * timers run while the test's thread waits.
 */
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort } from 'node:worker_threads';
import { createHttpServer } from '../../../proxy/adapters/http.js';
import { KEYS } from '../../helpers/proxy.js';
import { fixtureHandler } from './setup.js';

const LOAD_CONNECTIONS = 4;
const PAUSE_MS = 20;
const LOAD_PATH = '/v1/modules?limit=3&fields=name';

const handle = await fixtureHandler();
const ours = createHttpServer(handle);
const before = createHttpServer(handle);
before.keepAliveTimeout = 5_000;
before.keepAliveTimeoutBuffer = 1_000;
const listen = (server: typeof ours) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
const ports = { ours: await listen(ours), before: await listen(before) };

let loading = true;
const counts = { answered: 0, failed: 0 };
const agent = new Agent({ keepAlive: true, maxSockets: LOAD_CONNECTIONS * 2 });
async function loadLoop(port: number): Promise<void> {
  while (loading) {
    await new Promise<void>((resolve) => {
      const sent = request(
        {
          host: '127.0.0.1',
          port,
          path: LOAD_PATH,
          agent,
          headers: { authorization: `Bearer ${KEYS.main}` },
        },
        (response) => {
          response.resume();
          response.on('end', () => {
            if (response.statusCode === 200) counts.answered++;
            else counts.failed++;
            resolve();
          });
        },
      );
      sent.on('error', () => {
        counts.failed++;
        resolve();
      });
      sent.end();
    });
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
}
const loops = Array.from({ length: LOAD_CONNECTIONS }, (_, i) =>
  loadLoop(i % 2 === 0 ? ports.ours : ports.before),
);

parentPort!.on('message', async () => {
  loading = false;
  await Promise.all(loops);
  agent.destroy();
  for (const server of [ours, before]) server.closeAllConnections();
  await Promise.all([ours, before].map((server) => new Promise((resolve) => server.close(resolve))));
  parentPort!.postMessage({ type: 'stopped', ...counts });
});
parentPort!.postMessage({ type: 'ready', ...ports });
