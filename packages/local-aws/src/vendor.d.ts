// Minimal types for the local protocol servers, which ship none.
declare module 's3rver' {
  import type { RequestListener, Server } from 'node:http';
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    port?: number;
    address?: string;
    silent?: boolean;
    directory: string;
    resetOnClose?: boolean;
    configureBuckets?: { name: string; configs?: string[] }[];
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<AddressInfo>;
    /** Create the buckets of the `configureBuckets` option that are missing (what `run()` does first). */
    configureBuckets(): Promise<void>;
    close(): Promise<void>;
    /** Koa's request listener (s3rver is a Koa application). */
    callback(): RequestListener;
    /** The server `close()` closes: set by `run()`, or by whoever serves `callback()`. */
    httpServer?: Server;
    /** `'event'`: an S3 event notification (`{ Records: [...] }`) for each object created or removed. */
    on(event: 'event', listener: (notification: unknown) => void): this;
  }
}

declare module 'dynalite' {
  import type { Server } from 'node:http';

  interface DynaliteOptions {
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    /** Read by dynamo-journal.ts's hook on dynalite's store: an in-memory store kept in this journal. */
    journal?: unknown;
    /** Called with the store created on `journal`. */
    onStore?: (store: never) => void;
  }
  export default function dynalite(options?: DynaliteOptions): Server;
}
