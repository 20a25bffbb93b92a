/**
 * The local protocol servers (s3rver, dynalite: servers.ts) on a worker thread of their own, so that
 * their work runs beside the proxy's thread instead of on it (threads.ts starts the thread and speaks
 * to it). The servers listen in this thread; the parent only sends `stop`, `start` and `dispose` for one of
 * them and receives `ready`, the answers, and the bucket's S3 event notifications.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type LocalServer, startDynamo, startS3 } from './servers.js';
import type { Service, ThreadCommand, ThreadMessage, ThreadSpec } from './thread-protocol.js';

const port = parentPort!;
const spec = workerData as ThreadSpec;
const post = (message: ThreadMessage) => port.postMessage(message);

async function main(): Promise<void> {
  const servers: Partial<Record<Service, LocalServer>> = {};
  const [s3, dynamodb] = await Promise.all([
    spec.s3 && startS3(spec.s3.bucket, spec.s3),
    spec.dynamodb && startDynamo(spec.dynamodb),
  ]);
  if (s3) {
    // Structured clone keeps the notification as it is: a plain object of plain values.
    s3.onEvent((notification) => post({ type: 'event', notification }));
    servers.s3 = s3;
  }
  if (dynamodb) servers.dynamodb = dynamodb;
  port.on('message', (command: ThreadCommand) => {
    Promise.resolve()
      .then(() => servers[command.service]![command.op]())
      .then(
        () => post({ type: 'done', id: command.id }),
        (error: unknown) => post({ type: 'done', id: command.id, error: String(error) }),
      );
  });
  const ready: Extract<ThreadMessage, { type: 'ready' }>['servers'] = {};
  for (const [service, server] of Object.entries(servers) as [Service, LocalServer][]) {
    ready[service] = { endpoint: server.endpoint, port: server.port };
  }
  post({ type: 'ready', servers: ready });
}

main().catch((error: unknown) => {
  const { code, message } = error as { code?: unknown; message?: unknown };
  post({
    type: 'failed',
    error: typeof message === 'string' ? message : String(error),
    ...(typeof code === 'string' ? { code } : {}),
  });
  // Ending the thread ends whatever the failed start left open (a server that did start, a database).
  process.exit(1);
});
