/**
 * Paging: complete cursor walks (limit, fields and include changing from page to page), cursors bound to
 * their query, altered cursors, and a walk that stays on its snapshot while a new version is published.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCatalogue } from '../../builder/render/full.js';
import type { Snapshot } from '../../builder/snapshot/snapshot.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { MODULE_FIELDS, type ModuleField, type ModuleRelation, sortRecords } from '../../store/schema.js';
import { filteredModules, moduleRecord } from '../helpers/expected.js';
import { PREFIX, type Stack, startStack, testConfig } from '../helpers/proxy.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.dispose();
});

interface PageShape {
  limit?: number;
  fields?: ModuleField[];
  include?: ModuleRelation[];
}

function queryOf(base: string, shape: PageShape, cursor?: string): string {
  const parts = [base];
  if (shape.limit !== undefined) parts.push(`limit=${shape.limit}`);
  if (shape.fields) parts.push(`fields=${shape.fields.join(',')}`);
  if (shape.include) parts.push(`include=${shape.include.join(',')}`);
  if (cursor) parts.push(`cursor=${cursor}`);
  return parts.filter(Boolean).join('&');
}

/** Follow next_cursor to the end; `shapes` cycle page by page. Returns every page's records. */
async function walk(path: string, base: string, shapes: PageShape[], via = stack.handle) {
  const pages: { records: Record<string, unknown>[]; shape: PageShape }[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const shape = shapes[page % shapes.length]!;
    const answer = await stack.call('GET', `${path}?${queryOf(base, shape, cursor)}`, undefined, via);
    expect(answer.status).toBe(200);
    const body = answer.json();
    expect(body.data.length).toBeLessThanOrEqual(shape.limit ?? 50);
    pages.push({ records: body.data, shape });
    if (body.page.next_cursor === null) return pages;
    expect(body.data.length).toBe(shape.limit ?? 50);
    cursor = body.page.next_cursor;
  }
  throw new Error('the walk did not end');
}

describe('cursor walks', () => {
  const shapes: [string, PageShape[]][] = [
    ['limit 100', [{ limit: 100 }]],
    ['default limit', [{}]],
    ['limit 1', [{ limit: 1 }]],
    ['limits 7, 100, 33', [{ limit: 7 }, { limit: 100 }, { limit: 33 }]],
    ['limits 99, 2', [{ limit: 99 }, { limit: 2 }]],
    [
      'changing fields and include',
      [
        { limit: 30, fields: ['name'] },
        { limit: 100, include: ['tags', 'ins'] },
        { limit: 45, fields: ['hp', 'standard'], include: ['panels'] },
        { limit: 61 },
      ],
    ],
  ];

  describe.each(['id', 'name'] as const)('modules, sort=%s', (sort) => {
    it.each(shapes)('%s: the pages concatenate to the whole list', async (_, pageShapes) => {
      const pages = await walk('/v1/modules', `sort=${sort}`, pageShapes);
      const expected = filteredModules(stack.snapshot, {}, sort);
      const byId = new Map(expected.map((m) => [m.id, m]));
      expect(pages.flatMap((p) => p.records.map((r) => r.id))).toEqual(expected.map((m) => m.id));
      for (const { records, shape } of pages) {
        for (const record of records) {
          expect(record).toEqual(
            moduleRecord(stack.snapshot, byId.get(record.id as number)!, shape.fields, shape.include ?? []),
          );
        }
      }
    });
  });

  it.each([
    ['/v1/manufacturers', 'manufacturers'],
    ['/v1/tags', 'tags'],
    ['/v1/standards', 'standards'],
  ] as const)('%s walks completely with small pages, both sorts', async (path, kind) => {
    for (const sort of ['id', 'name'] as const) {
      const pages = await walk(path, `sort=${sort}`, [{ limit: 4 }, { limit: 9 }]);
      const expected = sortRecords(stack.snapshot[kind] as { id: number; name: string }[], sort);
      expect(pages.flatMap((p) => p.records.map((r) => r.id))).toEqual(expected.map((r) => r.id));
    }
  });

  it('filtered walks match the snapshot', async () => {
    const module = stack.snapshot.modules.find((m) => m.tag_ids.length > 0)!;
    for (const filters of [
      { standard: 0 },
      { tag: module.tag_ids[0]! },
      { manufacturer_id: module.manufacturer_id, standard: module.standard },
    ]) {
      const base = Object.entries(filters)
        .map(([k, v]) => `${k}=${v}`)
        .join('&');
      const pages = await walk('/v1/modules', base, [{ limit: 3 }, { limit: 17 }]);
      expect(pages.flatMap((p) => p.records.map((r) => r.id))).toEqual(
        filteredModules(stack.snapshot, filters).map((m) => m.id),
      );
    }
  });
});

describe('cursors are bound to their query', () => {
  async function cursorOf(target: string): Promise<string> {
    const cursor = (await stack.call('GET', target)).json().page.next_cursor;
    expect(typeof cursor).toBe('string');
    return cursor;
  }

  it('an omitted sort and sort=id are the same query', async () => {
    const cursor = await cursorOf('/v1/modules?limit=10');
    expect((await stack.call('GET', `/v1/modules?sort=id&cursor=${cursor}`)).status).toBe(200);
    const back = await cursorOf('/v1/modules?limit=10&sort=id');
    expect((await stack.call('GET', `/v1/modules?cursor=${back}`)).status).toBe(200);
  });

  it('filters given in another order are the same query', async () => {
    const cursor = await cursorOf('/v1/modules?standard=0&limit=2&manufacturer_id=1');
    expect(
      (await stack.call('GET', `/v1/modules?manufacturer_id=1&cursor=${cursor}&standard=0`)).status,
    ).toBe(200);
  });

  it.each([
    ['/v1/modules?limit=10', '/v1/modules?sort=name'],
    ['/v1/modules?limit=10', '/v1/modules?standard=0'],
    ['/v1/modules?standard=0&limit=10', '/v1/modules'],
    ['/v1/modules?standard=0&limit=10', '/v1/modules?standard=1'],
    ['/v1/modules?standard=0&limit=10', '/v1/modules?standard=0&hp=4'],
    ['/v1/modules?limit=10', '/v1/manufacturers'],
    ['/v1/tags?limit=5', '/v1/standards'],
    ['/v1/tags?limit=5', '/v1/tags?sort=name'],
    ['/v1/manufacturers?limit=5', '/v1/modules'],
  ])('a cursor of %s used on %s is invalid_parameter', async (from, to) => {
    const cursor = await cursorOf(from);
    const answer = await stack.call('GET', `${to}${to.includes('?') ? '&' : '?'}cursor=${cursor}`);
    expect(answer.status).toBe(400);
    expect(answer.json().error.code).toBe('invalid_parameter');
  });

  it('an altered cursor is invalid_parameter, whatever the change', async () => {
    const cursor = await cursorOf('/v1/modules?limit=10');
    const flip = (text: string, at: number) =>
      text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const altered = [
      flip(cursor, 0),
      flip(cursor, 5),
      flip(cursor, 20),
      flip(cursor, cursor.length - 1),
      cursor.slice(0, -1),
      `${cursor}A`,
      `${cursor}=`,
      cursor.toLowerCase(),
      'AAAA',
      `${cursor}%00`,
    ];
    for (const value of altered) {
      const answer = await stack.call('GET', `/v1/modules?cursor=${value}`);
      expect(answer.status, value).toBe(400);
      expect(answer.json().error.code).toBe('invalid_parameter');
    }
  });

  it('limit, fields and include may change between pages', async () => {
    const cursor = await cursorOf('/v1/modules?limit=10&fields=name');
    const answer = await stack.call('GET', `/v1/modules?cursor=${cursor}&limit=3&include=tags`);
    expect(answer.json().data.map((r: { id: number }) => r.id)).toEqual(
      filteredModules(stack.snapshot, {})
        .slice(10, 13)
        .map((m) => m.id),
    );
    expect(Object.keys(answer.json().data[0])).toEqual([...MODULE_FIELDS, 'tags']);
  });

  it('a cursor page answers If-None-Match with 304', async () => {
    const cursor = await cursorOf('/v1/modules?limit=60');
    const page = await stack.call('GET', `/v1/modules?cursor=${cursor}&limit=60`);
    const again = await stack.call('GET', `/v1/modules?cursor=${cursor}&limit=60`, {
      authorization: 'Bearer pk_live_MMMMMMMMMMMMMMMMMMMMMM',
      'if-none-match': page.headers.etag,
    });
    expect(again.status).toBe(304);
    const other = await stack.call('GET', `/v1/modules?cursor=${cursor}&limit=61`, {
      authorization: 'Bearer pk_live_MMMMMMMMMMMMMMMMMMMMMM',
      'if-none-match': page.headers.etag,
    });
    expect(other.status).toBe(200);
  });
});

describe('a walk pins its catalogue version', () => {
  it('pages keep coming from the version the walk started on, across a publish', async () => {
    const handle = stack.handler({ config: testConfig({ pointerTtlMs: 0 }) });
    const first = (await stack.call('GET', '/v1/modules?limit=100&fields=name', undefined, handle)).json();
    const before = filteredModules(stack.snapshot, {});

    // Publish a new version: the module at position 150 is renamed, the last one removed.
    const renamed = before[150]!;
    const next: Snapshot = {
      ...stack.snapshot,
      modules: stack.snapshot.modules
        .filter((m) => m.id !== before.at(-1)!.id)
        .map((m) => (m.id === renamed.id ? { ...m, name: `${m.name} (mk2)` } : m)),
    };
    const store = new S3ObjectStore({ client: stack.client, bucket: stack.s3.bucket });
    const rendered = renderCatalogue(next);
    const original = renderCatalogue(stack.snapshot);
    // Objects are content-addressed: only the changed ones are new (as in a real incremental publish).
    const added = [...rendered.objects].filter(([id]) => !original.objects.has(id));
    for (let i = 0; i < added.length; i += 16) {
      await Promise.all(added.slice(i, i + 16).map(([id, bytes]) => store.put(`${PREFIX}o/${id}`, bytes)));
    }
    await store.put(`${PREFIX}current.json`, rendered.pointerBytes);
    try {
      const rest = (
        await stack.call(
          'GET',
          `/v1/modules?fields=name&limit=100&cursor=${first.page.next_cursor}`,
          undefined,
          handle,
        )
      ).json();
      const walked = [...first.data, ...rest.data];
      let cursor = rest.page.next_cursor;
      while (cursor) {
        const page = (
          await stack.call('GET', `/v1/modules?fields=name&limit=100&cursor=${cursor}`, undefined, handle)
        ).json();
        walked.push(...page.data);
        cursor = page.page.next_cursor;
      }
      expect(walked).toEqual(before.map((m) => ({ id: m.id, name: m.name })));
      // A new walk sees the new version.
      const fresh = (await stack.call('GET', `/v1/modules/${renamed.id}`, undefined, handle)).json();
      expect(fresh.data.name).toBe(`${renamed.name} (mk2)`);
    } finally {
      await store.put(`${PREFIX}current.json`, original.pointerBytes);
    }
  });
});
