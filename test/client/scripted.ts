/**
 * A scripted API on a loopback `node:http` server (ephemeral port): each request takes the next answer of
 * the script and is recorded with the time it arrived, so tests can check what the client sent and when.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CatalogueClient, type CatalogueClientOptions } from '../../client/index.js';

export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
}

/** An answer, or a function that answers by itself (or never: the request then hangs until `close`). */
export type Step = ScriptedAnswer | ((response: ServerResponse) => void);

export interface Recorded {
  url: string;
  headers: IncomingHttpHeaders;
  /** `performance.now()` when the request arrived. */
  at: number;
}

export interface ScriptedServer {
  /** Base URL, ending in /v1. */
  baseUrl: string;
  requests: Recorded[];
  /** Append answers to the script. */
  script(...steps: Step[]): void;
  close(): Promise<void>;
}

export const RATE_HEADERS = (remainingMinute: number): Record<string, string> => ({
  'x-ratelimit-limit-minute': '60',
  'x-ratelimit-remaining-minute': String(remainingMinute),
  'x-ratelimit-limit-month': '5000',
  'x-ratelimit-remaining-month': String(4000 + remainingMinute),
  'x-ratelimit-reset': '1795000000',
});

/** The API's error answer for `code` (with rate-limit headers when metered). */
export function errorAnswer(
  status: number,
  code: string,
  headers: Record<string, string> = {},
): ScriptedAnswer {
  return {
    status,
    headers: { 'x-request-id': `req_${code}`, ...headers },
    body: { error: { code, message: `scripted ${code}`, request_id: `req_${code}` } },
  };
}

export async function startScripted(): Promise<ScriptedServer> {
  const steps: Step[] = [];
  const requests: Recorded[] = [];
  const server = createServer((request, response) => {
    requests.push({ url: request.url ?? '', headers: request.headers, at: performance.now() });
    const step = steps.shift() ?? { status: 500, body: 'unscripted request' };
    if (typeof step === 'function') {
      step(response);
      return;
    }
    const body =
      step.body === undefined
        ? undefined
        : typeof step.body === 'string'
          ? step.body
          : JSON.stringify(step.body);
    response.writeHead(step.status, {
      ...(body !== undefined ? { 'content-type': 'application/json; charset=utf-8' } : {}),
      ...step.headers,
    });
    response.end(body);
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...more) => steps.push(...more),
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** The key the clients of {@link clientOf} send. */
export const SCRIPTED_KEY = `pk_live_${'K'.repeat(22)}`;

/**
 * A client of `api` that never waits for real (its sleep returns at once), draws 0 for every jitter and warns
 * nowhere; `options` override any of it.
 * @example const client = clientOf(api, { timeout: 150, onRequest: () => sent++ });
 */
export function clientOf(
  api: ScriptedServer,
  options: Partial<CatalogueClientOptions> = {},
): CatalogueClient {
  return new CatalogueClient({
    baseUrl: api.baseUrl,
    apiKey: SCRIPTED_KEY,
    logger: false,
    random: () => 0,
    sleep: async () => {},
    ...options,
  });
}

/**
 * Runs `body` with console.warn recorded instead of printed: what it printed.
 * @example const printed = await withConsole(() => client.tags.listPage()); // → ['[@catalogue/read-api-client] …']
 */
export async function withConsole(body: () => Promise<unknown>): Promise<string[]> {
  const printed: string[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => printed.push(args.join(' '));
  try {
    await body();
  } finally {
    console.warn = original;
  }
  return printed;
}
