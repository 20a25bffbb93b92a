/**
 * Idle keep-alive connections under load: the adapter's server holds an idle connection longer than its
 * clients keep one (proxy/adapters/http.ts, IDLE_CONNECTION), so a client that reuses a kept connection after
 * an idle spell never finds it closed under its request. The race it prevents: a client reuses a connection
 * at the moment the server closes it (a busy client has not yet seen the server's FIN), and its request is
 * lost: undici's `UND_ERR_SOCKET` "other side closed", four walks at the same instant in a loaded run.
 *
 * The client here keeps its connections longer than Node's default server does (advertised 5 s, held 6 s)
 * and reuses them without looking, as a client too busy to have read the FIN does: after 8 s of idle it
 * sends on each. Against the adapter as it is, every request is answered on its kept connection; against
 * the same adapter with Node's default timeouts (the settings before), every one is lost — the test's own
 * proof that it can fail. Both servers run on a worker thread under a steady load of other connections.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDLE_CONNECTION } from '../../../proxy/adapters/http.js';
import { KEYS } from '../../helpers/proxy.js';

const KEPT = 4;
/** Past Node's default hold (6 s) with room for a late timer on a loaded machine. */
const IDLE_MS = 8_000;
const PATH = '/v1/modules?limit=1&fields=name';

let worker: Worker;
let ports: { ours: number; before: number };
beforeAll(async () => {
  worker = new Worker(new URL('./keep-alive-servers.ts', import.meta.url), {
    execArgv: ['--import', 'tsx'],
  });
  const [ready] = (await once(worker, 'message')) as [{ ours: number; before: number }];
  ports = ready;
});
afterAll(async () => {
  await worker?.terminate();
});

/** One raw connection that keeps itself open whatever the server does (it never looks before reusing). */
class KeptConnection {
  readonly socket: Socket;
  #received = Buffer.alloc(0);
  #wake: (() => void) | undefined;
  #ended = false;
  error: string | undefined;

  constructor(port: number) {
    // allowHalfOpen: the server's FIN does not close our side; only a write shows the connection is dead.
    this.socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    this.socket.on('data', (chunk: Buffer) => {
      this.#received = Buffer.concat([this.#received, chunk]);
      this.#wake?.();
    });
    this.socket.on('end', () => {
      this.#ended = true;
      this.#wake?.();
    });
    this.socket.on('error', (error: NodeJS.ErrnoException) => {
      this.error = error.code ?? error.message;
      this.#ended = true;
      this.#wake?.();
    });
  }

  /** Send one GET and read its answer: the status, or undefined if the connection ends without one. */
  async get(): Promise<{ status: number | undefined; keepAlive: string | undefined }> {
    this.#received = Buffer.alloc(0);
    this.socket.write(
      `GET ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${KEYS.main}\r\n\r\n`,
    );
    for (;;) {
      const text = this.#received.toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      if (head >= 0) {
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(text.slice(0, head))?.[1] ?? 0);
        if (this.#received.byteLength >= head + 4 + length) {
          return {
            status: Number(text.slice(9, 12)),
            keepAlive: /\r\nkeep-alive: ([^\r]*)/i.exec(text.slice(0, head))?.[1],
          };
        }
      }
      if (this.#ended) return { status: undefined, keepAlive: undefined };
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }
}

describe('idle keep-alive connections under load', () => {
  it('are held past a client’s idle spell by the adapter, and lost with Node’s defaults (the settings before)', async () => {
    const ours = Array.from({ length: KEPT }, () => new KeptConnection(ports.ours));
    const before = Array.from({ length: KEPT }, () => new KeptConnection(ports.before));
    try {
      const first = await Promise.all([...ours, ...before].map((connection) => connection.get()));
      expect(first.map((answer) => answer.status)).toEqual(Array(KEPT * 2).fill(200));
      // What a client that honours the hint reads: 60 s (undici and fetch keep it 58 s).
      expect(first[0]!.keepAlive).toBe(`timeout=${IDLE_CONNECTION.advertisedMs / 1000}`);
      expect(first[KEPT]!.keepAlive).toBe('timeout=5');

      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      const again = await Promise.all([...ours, ...before].map((connection) => connection.get()));

      // Every kept connection of the adapter answers; every one of the old settings had been closed under
      // the client, whose request is lost (reset, or the connection ends without an answer).
      expect(again.slice(0, KEPT).map((answer) => answer.status)).toEqual(Array(KEPT).fill(200));
      expect(again.slice(KEPT).map((answer) => answer.status)).toEqual(Array(KEPT).fill(undefined));
      expect(ours.map((connection) => connection.error)).toEqual(Array(KEPT).fill(undefined));
    } finally {
      for (const connection of [...ours, ...before]) connection.socket.destroy();
    }
    worker.postMessage('stop');
    const [load] = (await once(worker, 'message')) as [{ answered: number; failed: number }];
    // The servers were under load all along, and it was served.
    expect(load.answered).toBeGreaterThan(100);
    expect(load.failed).toBe(0);
  }, 30_000);
});
