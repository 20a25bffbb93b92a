/**
 * Child side of the bench's IPC: report `ready`, answer commands (heap samples with a forced GC, CPU
 * profiles through the inspector), stop cleanly on `stop`, and exit when the parent goes away.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { errorMessage } from '../../store/errors.js';

type Handler = (
  message: Record<string, unknown>,
) => Promise<Record<string, unknown>> | Record<string, unknown>;

const handlers = new Map<string, Handler>();
const cleanups: (() => Promise<void> | void)[] = [];
let session: Session | undefined;

function send(message: Record<string, unknown>): void {
  if (process.connected) process.send?.(message);
}

function post<T>(method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    session!.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as T)));
  });
}

export function onCommand(type: string, handler: Handler): void {
  handlers.set(type, handler);
}

export function onStop(cleanup: () => Promise<void> | void): void {
  cleanups.push(cleanup);
}

export function ready(info: Record<string, unknown>): void {
  send({ type: 'ready', ...info });
}

async function shutdown(code: number): Promise<never> {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch {
      // Stopping anyway.
    }
  }
  process.exit(code);
}

/** Run the child's main; a failure is reported to the parent, which then stops waiting. */
export function main(start: () => Promise<void>): void {
  start().catch((error: unknown) => {
    send({ type: 'failed', error: (error as Error).stack ?? String(error) });
    void shutdown(1);
  });
}

/** Listen on an ephemeral loopback port; the server is closed on stop. */
export async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.keepAliveTimeout = 60_000;
  onStop(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return (server.address() as AddressInfo).port;
}

function heap(force: boolean): Record<string, unknown> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (force && gc) {
    gc();
    gc();
  }
  const usage = process.memoryUsage();
  return { ...usage, forced: Boolean(force && gc), at: Date.now() };
}

onCommand('heap', (message) => heap(message.gc === true));
onCommand('cpu', () => {
  const { user, system } = process.cpuUsage();
  return { user, system };
});
onCommand('profile-start', async () => {
  session ??= new Session();
  session.connect();
  await post('Profiler.enable');
  await post('Profiler.start');
  return {};
});
onCommand('profile-stop', async (message) => {
  const { profile } = await post<{ profile: unknown }>('Profiler.stop');
  session!.disconnect();
  session = undefined;
  const file = String(message.file);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, JSON.stringify(profile));
  return { file };
});

process.on('message', (message: Record<string, unknown>) => {
  if (message.type === 'stop') {
    void shutdown(0);
    return;
  }
  const handler = handlers.get(String(message.type));
  if (!handler) {
    send({ id: message.id, error: `unknown command ${String(message.type)}` });
    return;
  }
  Promise.resolve()
    .then(() => handler(message))
    .then(
      (answer) => send({ ...answer, id: message.id }),
      (error: unknown) => send({ id: message.id, error: errorMessage(error) }),
    );
});
process.on('disconnect', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
