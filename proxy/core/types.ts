/** The proxy core's view of HTTP: plain values, so adapters stay thin and tests need no server. */

import type { ObjectStore } from '../../store/objects/interface.js';
import type { ByteCache } from '../cache/bytes.js';
import type { ConfigOutcome } from '../config.js';
import type { KeyStore } from '../keys/interface.js';
import type { QuotaMeter } from '../quota/interface.js';

export interface ProxyRequest {
  method: string;
  /** The path as sent, not percent-decoded (e.g. `/v1/modules/12`). */
  path: string;
  /** The query string as sent, without `?` (e.g. `limit=5&sort=name`); `''` when there is none. */
  query: string;
  /** Header values by lower-case name. `authorization` is the consumer's (adapters resolve proxies). */
  headers: Readonly<Record<string, string | undefined>>;
  /**
   * `performance.now()` when the request arrived, taken once by the adapter at its entry (both adapters set
   * it): the log line's `latency_ms` counts from it, so every wait before the core is in it (the cursor
   * secret's read at a cold start, joined by the requests that come meanwhile), as is every wait inside it
   * (a key lookup, a pointer re-check or an object read another request started). A direct caller that gives
   * none is timed from where the first handler met the request.
   */
  receivedAt?: number;
}

export interface ProxyResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** `undefined` for 204, 304 and HEAD answers. */
  body: Buffer | undefined;
}

export interface ProxyHandler {
  (request: ProxyRequest): Promise<ProxyResponse>;
  /**
   * Settles once work that requests began and that must end within an invocation has ended (a due re-read
   * of the cursor secret): the Lambda adapter waits for it after the answer is sent, before the runtime may
   * freeze the process. Never rejects.
   */
  settle?: () => Promise<void>;
}

/** One structured log line per request; never the key or the Authorization header. */
export interface RequestLogLine {
  time: string;
  request_id: string;
  method: string;
  route: string;
  status: number;
  latency_ms: number;
  bytes: number;
  key_id: string | null;
  /** What failed, for 503 answers (names a dependency or a variable, never a secret). */
  error?: string;
}

/** A line about the proxy itself rather than one request: a configuration it cannot use, a secret not read. */
export interface ProblemLogLine {
  time: string;
  level: 'error';
  message: string;
  /** What is missing or wrong (`configuration incomplete`). */
  problems?: string[];
}

/** Every line the wired proxy writes: one per request, and its problems. */
export type ProxyLogLine = RequestLogLine | ProblemLogLine;

export interface ProxyDependencies {
  objects: ObjectStore;
  keys: KeyStore;
  quota: QuotaMeter;
  /** The configuration as loaded: `config.ok` and `config.config`, or the problems that make it unusable. */
  config: ConfigOutcome;
  now: () => Date;
  requestId: () => string;
  log: (line: RequestLogLine) => void;
  /**
   * Bounded cache of bytes derived from immutable objects: index shards, data ranges, composed answers,
   * coded answers (keys: cacheKey in cache/bytes.ts).
   * @default a new one of `config.byteCacheBytes`
   */
  byteCache?: ByteCache;
}
