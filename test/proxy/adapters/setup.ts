/** What both adapter suites share: the core over the fixture, and the identity answer coded bodies decode to. */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createHandler } from '../../../proxy/core/handler.js';
import type { ProxyHandler, ProxyResponse } from '../../../proxy/core/types.js';
import { MemoryKeyStore } from '../../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../../proxy/quota/memory.js';
import { MemoryObjectStore } from '../../../store/objects/memory.js';
import { KEYS, publishFixture, testConfig } from '../../helpers/proxy.js';

/** The proxy core over the published fixture, with one key of huge limits (KEYS.main). */
export async function fixtureHandler(): Promise<ProxyHandler> {
  const objects = new MemoryObjectStore();
  await publishFixture(objects);
  const keys = new MemoryKeyStore();
  keys.add(KEYS.main, { limits: { minute: 100_000, month: 100_000 } });
  let n = 0;
  return createHandler({
    objects,
    keys,
    quota: new MemoryQuotaMeter(),
    config: testConfig(),
    now: () => new Date(),
    requestId: () => `req_adapter${++n}`,
    log: () => {},
  });
}

export const decode = { br: brotliDecompressSync, gzip: gunzipSync } as const;
export const CODED_PATH = '/v1/modules';
export const CODED_QUERY = 'limit=100&include=tags';

/** The identity answer of the core itself, to compare decoded bodies with. */
export async function identityAnswer(handle: ProxyHandler, method = 'GET'): Promise<ProxyResponse> {
  return handle({
    method,
    path: CODED_PATH,
    query: CODED_QUERY,
    headers: { authorization: `Bearer ${KEYS.main}` },
  });
}

/** A handler that always answers `response`. */
export const fixed =
  (response: ProxyResponse): ProxyHandler =>
  async () =>
    response;
