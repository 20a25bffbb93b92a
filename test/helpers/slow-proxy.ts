/**
 * A delaying TCP proxy on loopback, put in front of s3rver or dynalite to make a dependency slow or silent
 * without touching it. Bytes are forwarded in order, each chunk held for `delayMs` after it arrived.
 * `mode: 'blackhole'` accepts connections and never answers (a dependency that hangs).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { listenOnLoopback } from './loopback.js';

export type SlowProxyMode = 'pass' | 'blackhole';

export interface SlowProxy {
  /** `http://127.0.0.1:<port>`, to use as the client's endpoint. */
  endpoint: string;
  port: number;
  /** Delay applied to every chunk in both directions from now on (existing connections included). */
  setDelay(ms: number): void;
  setMode(mode: SlowProxyMode): void;
  /** Drop every open connection (clients see resets) but keep listening. */
  dropConnections(): void;
  /** Stop listening and drop every connection. */
  close(): Promise<void>;
}

export interface SlowProxyOptions {
  targetPort: number;
  targetHost?: string;
  delayMs?: number;
  mode?: SlowProxyMode;
}

/**
 * @example
 * const slow = await startSlowProxy({ targetPort: s3.port });
 * slow.setDelay(5_000); // every S3 call through `slow.endpoint` now takes 5 s or more
 */
export async function startSlowProxy(options: SlowProxyOptions): Promise<SlowProxy> {
  const host = options.targetHost ?? '127.0.0.1';
  let delayMs = options.delayMs ?? 0;
  let mode: SlowProxyMode = options.mode ?? 'pass';
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const track = (socket: Socket) => {
    sockets.add(socket);
    // No Nagle: a chunk held back waiting for an ACK (delayed up to 40 ms) would add latency of its own.
    socket.setNoDelay(true);
    socket.on('close', () => sockets.delete(socket));
    // A reset from either side is expected here; it must never become an uncaught exception.
    socket.on('error', () => socket.destroy());
  };

  /** Forward `from` → `to`, each chunk no earlier than `delayMs` after it arrived, in order. */
  const forward = (from: Socket, to: Socket) => {
    let tail = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      const due = Date.now() + delayMs;
      tail = tail.then(async () => {
        const wait = due - Date.now();
        if (wait > 0) await sleep(wait);
        if (!to.destroyed) to.write(chunk);
      });
    });
    from.on('end', () => {
      tail = tail.then(() => {
        if (!to.destroyed) to.end();
      });
    });
    from.on('close', () => {
      tail = tail.then(() => {
        to.destroy();
      });
    });
  };

  const server: Server = createServer((client) => {
    track(client);
    if (mode === 'blackhole') return;
    const upstream = createConnection({ port: options.targetPort, host });
    track(upstream);
    forward(client, upstream);
    forward(upstream, client);
  });

  const port = await listenOnLoopback(server);

  const dropConnections = () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };

  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    setDelay(ms) {
      delayMs = ms;
    },
    setMode(next) {
      mode = next;
    },
    dropConnections,
    close() {
      dropConnections();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
