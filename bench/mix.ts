/**
 * The request mixes. Filter values are picked from the snapshot (the biggest manufacturer, the most common
 * width and tag…), cursors are obtained by walking the API page by page, entity tags by asking once.
 */
import type { Snapshot } from '../builder/snapshot/snapshot.js';
import { get, json } from './http.js';
import { BENCH_KEY } from './settings.js';

export const AUTH = { authorization: `Bearer ${BENCH_KEY}` };

export interface MixEntry {
  category: string;
  label: string;
  path: string;
  /** The path as shown in tables (cursors abbreviated). */
  shown: string;
  headers?: Record<string, string>;
  /** The status this request must get. */
  expect: number;
}

export interface Picks {
  /** The manufacturer with the most modules, and its most common width. */
  bigMaker: number;
  bigMakerHp: number;
  /** A manufacturer of median size. */
  medianMaker: number;
  /** The most common width, tag, and a rare standard. */
  hp: number;
  tag: number;
  rareStandard: number;
  moduleId: number;
  missingModuleId: number;
}

function mostCommon(values: Iterable<number>, rank = 0): number {
  const counts = new Map<number, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  const sorted = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return sorted[Math.min(rank, sorted.length - 1)]![0];
}

export function pickFilters(snapshot: Snapshot): Picks {
  const { modules } = snapshot;
  const bigMaker = mostCommon(modules.map((m) => m.manufacturer_id));
  const makers = new Map<number, number>();
  for (const m of modules) makers.set(m.manufacturer_id, (makers.get(m.manufacturer_id) ?? 0) + 1);
  const bySize = [...makers.entries()].sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  const standards = new Map<number, number>();
  for (const m of modules) standards.set(m.standard, (standards.get(m.standard) ?? 0) + 1);
  const rare = [...standards.entries()].sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  return {
    bigMaker,
    bigMakerHp: mostCommon(modules.filter((m) => m.manufacturer_id === bigMaker).map((m) => m.hp)),
    medianMaker: bySize[bySize.length >> 1]![0],
    hp: mostCommon(modules.map((m) => m.hp)),
    tag: mostCommon(modules.flatMap((m) => m.tag_ids)),
    rareStandard: rare[0]![0],
    moduleId: modules[modules.length >> 1]!.id,
    missingModuleId: Math.max(...modules.map((m) => m.id)) + 1000,
  };
}

function withCursor(path: string, cursor: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`;
}

/**
 * Follow `page.next_cursor` from `path` to page `page` (1 = `path` itself), or to the last page if there
 * are fewer. Returns the path of that page and its number.
 */
export async function walkTo(
  port: number,
  path: string,
  page: number,
): Promise<{ path: string; page: number }> {
  let current = path;
  for (let n = 1; n < page; n++) {
    const reply = await get(port, current, AUTH);
    if (reply.status !== 200) throw new Error(`walking ${current}: status ${reply.status}`);
    const cursor = json(reply).page?.next_cursor;
    if (!cursor) return { path: current, page: n };
    current = withCursor(path, cursor);
  }
  return { path: current, page };
}

/** Number of pages of a list (walked). */
async function pageCount(port: number, path: string): Promise<number> {
  return (await walkTo(port, path, 1_000_000)).page;
}

async function etagOf(port: number, path: string): Promise<string> {
  const reply = await get(port, path, AUTH);
  const etag = reply.headers.etag;
  if (reply.status !== 200 || typeof etag !== 'string')
    throw new Error(`no ETag for ${path} (${reply.status})`);
  return etag;
}

function entry(category: string, label: string, path: string, expect = 200, shown = path): MixEntry {
  return { category, label, path, shown, expect };
}

/**
 * Section 2's mix: every kind of request a consumer makes, each once per cycle (autocannon's connections
 * each loop over the list in order).
 */
export async function coreMix(port: number, picks: Picks): Promise<MixEntry[]> {
  const entries: MixEntry[] = [];
  const add = (e: MixEntry) => entries.push(e);

  add(entry('first page', 'modules (default limit 50)', '/v1/modules'));
  add(entry('first page', 'modules, limit=100', '/v1/modules?limit=100'));
  add(entry('first page', 'manufacturers', '/v1/manufacturers'));
  add(entry('first page', 'standards', '/v1/standards'));
  add(entry('first page', 'tags', '/v1/tags'));

  const byId = '/v1/modules?limit=100';
  const pagesById = await pageCount(port, byId);
  const middle = await walkTo(port, byId, Math.max(2, Math.ceil(pagesById / 2)));
  add(
    entry(
      'deep cursor page',
      `modules by id, page ${middle.page} of ${pagesById}`,
      middle.path,
      200,
      `${byId}&cursor=…`,
    ),
  );
  const last = await walkTo(port, byId, pagesById);
  add(
    entry('deep cursor page', `modules by id, last page (${last.page})`, last.path, 200, `${byId}&cursor=…`),
  );
  const byName = '/v1/modules?sort=name';
  const pagesByName = await pageCount(port, byName);
  const deepName = await walkTo(port, byName, Math.max(2, Math.floor(pagesByName * 0.8)));
  add(
    entry(
      'deep cursor page',
      `modules by name, page ${deepName.page} of ${pagesByName}`,
      deepName.path,
      200,
      `${byName}&cursor=…`,
    ),
  );
  const maker = `/v1/modules?manufacturer_id=${picks.bigMaker}&sort=name`;
  const makerPage = await walkTo(port, maker, 3);
  add(
    entry(
      'deep cursor page',
      `biggest manufacturer by name, page ${makerPage.page}`,
      makerPage.path,
      200,
      `${maker}&cursor=…`,
    ),
  );

  add(entry('filter', 'manufacturer_id', `/v1/modules?manufacturer_id=${picks.bigMaker}`));
  add(entry('filter', 'hp', `/v1/modules?hp=${picks.hp}`));
  add(entry('filter', 'standard', `/v1/modules?standard=${picks.rareStandard}`));
  add(entry('filter', 'tag', `/v1/modules?tag=${picks.tag}`));
  add(
    entry(
      'filter',
      'manufacturer_id + hp',
      `/v1/modules?manufacturer_id=${picks.bigMaker}&hp=${picks.bigMakerHp}`,
    ),
  );
  add(entry('filter', 'hp + standard + tag', `/v1/modules?hp=${picks.hp}&standard=0&tag=${picks.tag}`));

  add(entry('sort=name', 'modules', '/v1/modules?sort=name'));
  add(entry('sort=name', 'manufacturers', '/v1/manufacturers?sort=name'));
  add(entry('sort=name', 'hp filter', `/v1/modules?hp=${picks.hp}&sort=name`));

  add(entry('fields', 'fields=name,hp', '/v1/modules?fields=name,hp'));
  add(
    entry(
      'fields',
      'fields=name + include=tags, limit=100',
      '/v1/modules?fields=name&include=tags&limit=100',
    ),
  );
  add(entry('include', 'include=ins,outs,tags,panels', '/v1/modules?include=ins,outs,tags,panels'));

  add(entry('detail', 'module', `/v1/modules/${picks.moduleId}`));
  add(entry('detail', 'module, include all', `/v1/modules/${picks.moduleId}?include=ins,outs,tags,panels`));
  add(entry('detail', 'manufacturer', `/v1/manufacturers/${picks.medianMaker}`));
  add(
    entry(
      'detail',
      'manufacturer, include=modules',
      `/v1/manufacturers/${picks.medianMaker}?include=modules`,
    ),
  );

  const conditional = (label: string, path: string, etag: string, shown = path) =>
    add({
      category: 'conditional (304)',
      label,
      path,
      shown,
      headers: { 'if-none-match': etag },
      expect: 304,
    });
  conditional('first page', '/v1/modules', await etagOf(port, '/v1/modules'));
  conditional('deep cursor page', middle.path, await etagOf(port, middle.path), `${byId}&cursor=…`);
  conditional('filter', `/v1/modules?hp=${picks.hp}`, await etagOf(port, `/v1/modules?hp=${picks.hp}`));
  const detail = `/v1/modules/${picks.moduleId}`;
  conditional('module detail', detail, await etagOf(port, detail));
  return entries;
}

export interface PeerEntry {
  label: string;
  proxy: MixEntry;
  /** The json-server request for the same records. */
  peer: string;
  /** Page number (limit 50). */
  page: number;
}

export interface PeerQuery {
  label: string;
  filters: Partial<Record<'manufacturer_id' | 'hp' | 'standard', number>>;
  page: number;
}

/** The filtered, sorted pages of section 3 (limit 50, sort=name). */
export function peerQueries(picks: Picks): PeerQuery[] {
  return [
    { label: 'biggest manufacturer', filters: { manufacturer_id: picks.bigMaker }, page: 1 },
    { label: 'biggest manufacturer, page 3', filters: { manufacturer_id: picks.bigMaker }, page: 3 },
    { label: 'median manufacturer', filters: { manufacturer_id: picks.medianMaker }, page: 1 },
    { label: 'hp', filters: { hp: picks.hp }, page: 1 },
    {
      label: 'manufacturer_id + hp',
      filters: { manufacturer_id: picks.bigMaker, hp: picks.bigMakerHp },
      page: 1,
    },
    { label: 'standard + hp, page 3', filters: { standard: 0, hp: picks.hp }, page: 3 },
    { label: 'rare standard', filters: { standard: picks.rareStandard }, page: 1 },
    { label: 'no filter, page 20', filters: {}, page: 20 },
  ];
}

/**
 * Section 3's mix: filtered and sorted pages, each with its json-server equivalent
 * (`?filter=…&_sort=name&_page=N&_limit=50`).
 */
export async function peerMix(port: number, picks: Picks): Promise<PeerEntry[]> {
  const queries = peerQueries(picks);
  const entries: PeerEntry[] = [];
  for (const query of queries) {
    const params = Object.entries(query.filters).map(([k, v]) => `${k}=${v}`);
    const base = `/v1/modules?${[...params, 'sort=name'].join('&')}`;
    const walked = await walkTo(port, base, query.page);
    entries.push({
      label: query.label,
      page: walked.page,
      proxy: entry(
        'filtered, sorted page',
        query.label,
        walked.path,
        200,
        walked.page > 1 ? `${base}&cursor=…` : base,
      ),
      peer: `/modules?${[...params, '_sort=name', `_page=${walked.page}`, '_limit=50'].join('&')}`,
    });
  }
  return entries;
}

/** Soak mix: the peer mix plus details, includes and conditional requests. */
export async function soakMix(port: number, picks: Picks, peer: PeerEntry[]): Promise<MixEntry[]> {
  const entries = peer.map((e) => e.proxy);
  entries.push(
    entry('detail', 'module, include all', `/v1/modules/${picks.moduleId}?include=ins,outs,tags,panels`),
  );
  entries.push(
    entry('detail', 'manufacturer, include=modules', `/v1/manufacturers/${picks.bigMaker}?include=modules`),
  );
  entries.push(entry('detail', 'missing module', `/v1/modules/${picks.missingModuleId}`, 404));
  const first = peer[0]!.proxy.path;
  entries.push({
    category: 'conditional (304)',
    label: 'first page',
    path: first,
    shown: first,
    headers: { 'if-none-match': await etagOf(port, first) },
    expect: 304,
  });
  return entries;
}
