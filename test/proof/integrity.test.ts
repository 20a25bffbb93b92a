/**
 * Integrity end to end, with real servers: the proxy as deployed (createProxy) over s3rver behind a
 * fault-injecting HTTP proxy that damages what S3 answers — one byte flipped (length kept), the body cut
 * short, the body replaced by garbage — and over dynalite for keys and metering, through the request path's
 * one client (lean signed requests). Whatever the damage: never a wrong answer, every failure `503 origin_unavailable` and not counted,
 * a cursor page's damaged read never blamed on the consumer (no 400), nothing damaged kept in the byte
 * cache (healthy again, every answer is the healthy one), one damaged read read again; and the last known
 * pointer serving through SlowDown on its re-check until its documented bound.
 */

import type { LocalServer } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../builder/snapshot/snapshot.js';
import { STALE_FACTOR } from '../../proxy/catalogue/pointer.js';
import type { ProxyHandler, ProxyResponse, RequestLogLine } from '../../proxy/core/types.js';
import { deployedProxy, startDeployedWorld } from '../helpers/deployed.js';
import { type FaultAction, type FaultProxy, s3Error, startFaultProxy } from '../helpers/fault-proxy.js';
import { envelopeProblem, errorCodeOf } from '../oracle/harness.js';

const BUCKET = 'proof-integrity';
const PREFIX = 'cat/';
const TABLES = { keysTable: 'integrity-keys', countersTable: 'integrity-counters' };
const KEY = `pk_live_${'I'.repeat(22)}`;
const POINTER_TTL_MS = 1_000;

let s3: LocalServer & { bucket: string };
let dynamo: LocalServer;
let faults: FaultProxy;
let targets: string[];
const logs: RequestLogLine[] = [];

const SETTINGS = { bucket: BUCKET, prefix: PREFIX, tables: TABLES };

beforeAll(async () => {
  // More than one segment (over 100 modules), so first pages and cursor pages are ranges with digests.
  let snapshot: Snapshot;
  ({ s3, dynamo, snapshot } = await startDeployedWorld({
    ...SETTINGS,
    keys: [KEY],
    catalogue: { minModules: 230, maxModules: 260, seed: 22 },
  }));
  faults = await startFaultProxy({ targetPort: s3.port });
  const module = snapshot.modules[3]!;
  targets = [
    '/v1/tags',
    '/v1/standards?sort=name',
    '/v1/manufacturers',
    '/v1/modules?limit=100',
    '/v1/modules?sort=name&limit=7&include=tags',
    `/v1/modules/${module.id}?include=ins,outs`,
    `/v1/manufacturers/${module.manufacturer_id}?include=modules`,
    `/v1/modules?manufacturer_id=${module.manufacturer_id}`,
  ];
}, 120_000);

afterAll(async () => {
  await faults?.close();
  await s3?.dispose();
  await dynamo?.dispose();
});

/** The proxy as deployed, its S3 reads through the damaging proxy. */
function throughFaults(now: () => Date = () => new Date()): ProxyHandler {
  return deployedProxy({
    settings: SETTINGS,
    endpoints: { s3: faults.endpoint, dynamodb: dynamo.endpoint },
    env: {
      KEY_CACHE_TTL_MS: '600000',
      POINTER_TTL_MS: String(POINTER_TTL_MS),
      DEPENDENCY_TIMEOUT_MS: '5000',
      BYTE_CACHE_MB: '16',
    },
    logs,
    now,
  });
}

async function get(handle: ProxyHandler, target: string): Promise<ProxyResponse> {
  const [path, query = ''] = target.split('?') as [string, string?];
  return handle({ method: 'GET', path, query, headers: { authorization: `Bearer ${KEY}` } });
}

/** What a consumer sees of an answer: status and body, without the request id. */
const seenAs = (answer: ProxyResponse) =>
  `${answer.status} ${(answer.body?.toString() ?? '').replace(/"request_id":"req_[^"]*"/, '')}`;

/** Requests counted so far this month, as the meter's own headers say (an OPTIONS counts itself). */
async function counted(handle: ProxyHandler): Promise<number> {
  const answer = await handle({
    method: 'OPTIONS',
    path: '/v1/tags',
    query: '',
    headers: { authorization: `Bearer ${KEY}` },
  });
  return 1e9 - Number(answer.headers['x-ratelimit-remaining-month']);
}

const objectReads = ({ method, url }: { method: string; url: string }) =>
  method === 'GET' && url.includes(`/${PREFIX}o/`);

describe('integrity with s3rver behind a damaging proxy', () => {
  /** The healthy answers of the targets, and of the cursor page that follows the first page of each. */
  const healthy = new Map<string, string>();

  beforeAll(async () => {
    faults.setRule(undefined);
    const handle = throughFaults();
    for (const target of targets) {
      const answer = await get(handle, target);
      healthy.set(target, seenAs(answer));
      const cursor = answer.status === 200 ? JSON.parse(answer.body!.toString()).page?.next_cursor : null;
      if (cursor) {
        const next = `${target}${target.includes('?') ? '&' : '?'}cursor=${cursor}`;
        healthy.set(next, seenAs(await get(handle, next)));
      }
    }
    expect([...healthy.keys()].some((target) => target.includes('cursor='))).toBe(true);
  });

  it.each(['flip', 'truncate', 'garbage'] as const)(
    'every object read %s-damaged: never a wrong answer, 503 origin_unavailable, not counted; healthy again, nothing damaged was kept',
    async (action) => {
      const handle = throughFaults();
      const before = await counted(handle);
      faults.setRule((request) => (objectReads(request) ? action : undefined));
      const answers = new Map<string, ProxyResponse>();
      try {
        for (const target of healthy.keys()) answers.set(target, await get(handle, target));
      } finally {
        faults.setRule(undefined);
      }
      for (const [target, answer] of answers) {
        expect([answer.status, errorCodeOf(answer), envelopeProblem(answer)], target).toEqual([
          503,
          'origin_unavailable',
          undefined,
        ]);
        expect(answer.headers['x-ratelimit-limit-month']).toBeUndefined();
      }
      // Only the OPTIONS that reads the counter counted: none of the damaged requests.
      expect(await counted(handle)).toBe(before + 1);
      expect(logs.at(-2)?.error ?? '').toMatch(/integrity|s3 get|failed/);
      for (const target of healthy.keys())
        expect(seenAs(await get(handle, target)), target).toBe(healthy.get(target));
    },
  );

  it('one damaged read is read again: the right answer, counted once, and the damage not kept', async () => {
    const handle = throughFaults();
    const damagedOnce = new Set<string>();
    faults.setRule((request) => {
      const read = `${request.url} ${request.headers.range ?? 'whole'}`;
      if (!objectReads(request) || damagedOnce.has(read)) return undefined;
      damagedOnce.add(read);
      return 'flip';
    });
    const mark = faults.seen.length;
    try {
      for (const target of healthy.keys())
        expect(seenAs(await get(handle, target)), target).toBe(healthy.get(target));
    } finally {
      faults.setRule(undefined);
    }
    // Each object read damaged once was read once more, as a transient fault is retried.
    const reads = faults.seen.slice(mark).filter(objectReads);
    expect(reads.filter((r) => r.action === 'flip')).toHaveLength(damagedOnce.size);
    expect(reads).toHaveLength(2 * damagedOnce.size);
  });

  it("a cursor page's damaged read is the store's fault (503, not counted), never invalid_parameter; a tampered cursor still is", async () => {
    const handle = throughFaults();
    const page = [...healthy.keys()].find((target) => target.includes('cursor='))!;
    const before = await counted(handle);
    for (const action of ['garbage', 'truncate', 'flip'] as const) {
      faults.setRule((request) => (objectReads(request) && request.headers.range ? action : undefined));
      try {
        const answer = await get(handle, page);
        expect([answer.status, errorCodeOf(answer)], action).toEqual([503, 'origin_unavailable']);
      } finally {
        faults.setRule(undefined);
      }
    }
    expect(await counted(handle)).toBe(before + 1);
    const tampered = page.replace(/cursor=(.)/, (_, c: string) => `cursor=${c === 'A' ? 'B' : 'A'}`);
    expect(errorCodeOf(await get(handle, tampered))).toBe('invalid_parameter');
    expect(seenAs(await get(handle, page))).toBe(healthy.get(page));
  });

  it(`SlowDown on the pointer re-check: the last known pointer serves until it is ${STALE_FACTOR} TTLs old`, async () => {
    const start = Date.now();
    let clock = start;
    const handle = throughFaults(() => new Date(clock));
    const target = targets[0]!;
    expect(seenAs(await get(handle, target))).toBe(healthy.get(target));
    const slowDown: FaultAction = s3Error(503, 'SlowDown', 'Please reduce your request rate.');
    faults.setRule(({ url }) => (url.includes('current.json') ? slowDown : undefined));
    try {
      for (const ttls of [1, 10, STALE_FACTOR - 1]) {
        clock = start + ttls * POINTER_TTL_MS;
        expect(seenAs(await get(handle, target)), `${ttls} TTLs`).toBe(healthy.get(target));
      }
      clock = start + (STALE_FACTOR + 1) * POINTER_TTL_MS;
      const late = await get(handle, target);
      expect([late.status, errorCodeOf(late)]).toEqual([503, 'origin_unavailable']);
    } finally {
      faults.setRule(undefined);
    }
    expect(seenAs(await get(handle, target))).toBe(healthy.get(target));
  });
});
