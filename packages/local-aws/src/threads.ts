/**
 * The local protocol servers off the proxy's thread: `npm start` runs s3rver and dynalite on a worker thread
 * of their own (server-thread.ts), so the emulation of S3 and DynamoDB — most of the CPU of a request
 * to `npm start` — runs on another core instead of beside the proxy on one. Same servers and the same
 * `LocalServer` interface as in-process (servers.ts: stop listening for real, listen again on the same
 * port and data, dispose), and the local S3's event notifications are forwarded to the parent as they come.
 *
 * One thread for both: once warm the proxy reads nothing from S3, so while it serves the thread's work is
 * dynalite's, and while `npm start` publishes it is s3rver's; a thread each would cost another ~0.4 s of CPU
 * at every start (the TypeScript loader and the shared modules, loaded again) for no measured gain on two
 * cores. Threads, not child processes: they end with the process however it ends (Ctrl-C, SIGTERM, SIGKILL,
 * a crash), so no server can outlive `npm start` and keep its ports or its data directory. A thread that dies
 * while serving (an uncaught error in a server) is reported to `onCrash`.
 */
import { Worker } from 'node:worker_threads';
import type { S3EventNotification } from './events.js';
import type { DynamoOptions, LocalS3, LocalServer, S3Options } from './servers.js';
import type { Service, ThreadCommand, ThreadMessage, ThreadSpec } from './thread-protocol.js';

export interface ThreadOptions {
  /**
   * Called once if the thread stops while serving, without `dispose` (an uncaught error in a server, a
   * thread that exits). By default the error is thrown in the parent: nothing goes on silently without it.
   */
  onCrash?: (error: Error) => void;
  /** The thread's module: server-thread.ts (tests give one that fails on purpose). */
  module?: URL;
}

/**
 * What to run: the local S3 with its bucket, the local DynamoDB, or both, with the options of `startS3` and
 * `startDynamo` (data directory: a fresh temporary one if absent; port 0: ephemeral). Plain data: they are
 * cloned to the thread.
 */
export interface ThreadServers {
  s3?: S3Options & { bucket: string };
  dynamodb?: DynamoOptions;
}

/** A server that did not start; `code` is the system error's, e.g. `EADDRINUSE` for a port in use. */
export class ServerStartError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'ServerStartError';
  }
}

const NAMES: Record<Service, string> = {
  s3: 'the local S3 (s3rver)',
  dynamodb: 'the local DynamoDB (dynalite)',
};

/**
 * The thread runs TypeScript as its parent does: it inherits the parent's flags, tsx's loader among them
 * (`npm start` runs under tsx); a parent that runs TypeScript otherwise (vitest) gives it tsx's loader.
 */
function threadFlags(): string[] | undefined {
  return process.execArgv.some((flag) => flag.includes('tsx')) ? undefined : ['--import', 'tsx'];
}

type Ready = ThreadMessage & { type: 'ready' };

/**
 * The parent's side of the thread: its phase, the servers still live, the commands awaiting their answer and
 * the S3 event listeners; the thread's messages and its exit change them.
 */
class ServerThread {
  /** Starting until `ready` or `failed`; serving until every server is disposed or the thread exits. */
  private phase: 'starting' | 'serving' | 'ended' | 'failed' = 'starting';
  readonly listeners = new Set<(notification: S3EventNotification) => void>();
  private readonly pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private nextId = 1;
  private readonly live: Set<Service>;
  private failure: Error | undefined;
  private settle!: { resolve: (servers: Ready) => void; reject: (error: Error) => void };
  /** Resolves once every server asked for listens. */
  readonly ready: Promise<Ready>;

  constructor(
    private readonly worker: Worker,
    private readonly thread: { asked: readonly Service[]; name: string; onCrash: (error: Error) => void },
  ) {
    this.live = new Set(thread.asked);
    this.ready = new Promise<Ready>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    worker.on('message', (message: ThreadMessage) => this.received(message));
    // An uncaught error in the thread: 'exit' follows at once.
    worker.on('error', (error) => {
      this.failure = error;
    });
    worker.on('exit', (code) => this.exited(code));
  }

  private received(message: ThreadMessage): void {
    switch (message.type) {
      case 'ready':
        this.phase = 'serving';
        this.settle.resolve(message);
        break;
      case 'failed':
        this.phase = 'failed';
        this.settle.reject(
          new ServerStartError(`${this.thread.name} did not start: ${message.error}`, message.code),
        );
        break;
      case 'done': {
        const waiting = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error) waiting?.reject(new Error(message.error));
        else waiting?.resolve();
        break;
      }
      case 'event':
        for (const listener of this.listeners) listener(message.notification);
        break;
    }
  }

  private exited(code: number): void {
    const { name } = this.thread;
    const { failure } = this;
    const why = failure ? `${failure.name}: ${failure.message}` : `its thread exited with code ${code}`;
    for (const waiting of this.pending.values()) waiting.reject(new Error(`${name} stopped: ${why}`));
    this.pending.clear();
    if (this.phase === 'starting') {
      this.phase = 'failed';
      this.settle.reject(new ServerStartError(`${name} did not start: ${why}`, undefined));
    } else if (this.phase === 'serving') {
      this.phase = 'ended';
      this.thread.onCrash(new Error(`${name} crashed: ${why}`, { cause: failure }));
    }
  }

  /** Ask the thread to stop, start or dispose a server; resolves on its answer. */
  private command(service: Service, op: ThreadCommand['op']): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.phase !== 'serving' || !this.live.has(service)) {
        reject(new Error(`${NAMES[service]} is not running: it was disposed, or its thread ended`));
        return;
      }
      const id = this.nextId++;
      this.pending.set(id, {
        resolve,
        reject: (error) => reject(new Error(`${NAMES[service]}: ${error.message}`)),
      });
      this.worker.postMessage({ id, service, op } satisfies ThreadCommand);
    });
  }

  /** Dispose a server; the thread ends with the last. */
  private async dispose(service: Service): Promise<void> {
    if (!this.live.has(service)) return;
    try {
      if (this.phase === 'serving') await this.command(service, 'dispose');
    } finally {
      this.live.delete(service);
      if (this.live.size === 0) {
        this.phase = 'ended';
        this.listeners.clear();
        await this.worker.terminate();
      }
    }
  }

  /** One server on the thread, as a `LocalServer`. */
  serverOf(service: Service, started: Ready): LocalServer {
    const { endpoint, port } = started.servers[service]!;
    return {
      endpoint,
      port,
      stop: () => this.command(service, 'stop'),
      start: () => this.command(service, 'start'),
      dispose: () => this.dispose(service),
    };
  }
}

/**
 * Start the servers asked for on one thread; resolves once all listen.
 * @example
 * const { s3, dynamodb } = await startServerThread({ s3: { bucket: 'catalogue' }, dynamodb: {} }, { onCrash });
 */
export async function startServerThread(
  servers: ThreadServers,
  options: ThreadOptions = {},
): Promise<{ s3?: LocalS3; dynamodb?: LocalServer }> {
  const asked = (['s3', 'dynamodb'] as const).filter((service) => servers[service]);
  const name = asked.map((service) => NAMES[service]).join(' and ');
  const onCrash =
    options.onCrash ??
    ((error: Error) => {
      throw error;
    });
  const spec: ThreadSpec = {
    ...(servers.s3 && { s3: servers.s3 }),
    ...(servers.dynamodb && { dynamodb: servers.dynamodb }),
  };
  const flags = threadFlags();
  const worker = new Worker(options.module ?? new URL('./server-thread.ts', import.meta.url), {
    workerData: spec,
    name: 'local servers',
    ...(flags ? { execArgv: flags } : {}),
  });
  const thread = new ServerThread(worker, { asked, name, onCrash });
  const started = await thread.ready;
  return {
    ...(servers.s3 && {
      s3: {
        ...thread.serverOf('s3', started),
        bucket: servers.s3.bucket,
        onEvent(listener: (notification: S3EventNotification) => void) {
          thread.listeners.add(listener);
          return () => thread.listeners.delete(listener);
        },
      },
    }),
    ...(servers.dynamodb && { dynamodb: thread.serverOf('dynamodb', started) }),
  };
}
