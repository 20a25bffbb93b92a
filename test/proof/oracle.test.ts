/**
 * The oracle checked by hand on a tiny catalogue: if it is wrong, every equivalence run is wrong with it.
 */
import { describe, expect, it } from 'vitest';
import type { Snapshot } from '../../builder/snapshot/snapshot.js';
import { CursorBook, normaliseCursor, Oracle, type OracleRequest } from '../oracle/oracle.js';

const KEY = 'pk_live_AAAAAAAAAAAAAAAAAAAAAA';
const base = {
  standards: [{ id: 0, name: 'Eurorack', height_mm: 128.5 }],
  tags: [
    { id: 9, name: 'VCO', type: 'source' as const },
    { id: 2, name: 'Filter', type: null },
  ],
  manufacturers: [
    { id: 3, name: 'Make Noise', country: 'US' },
    { id: 1, name: 'Mutable', country: null },
  ],
};
const module = (id: number, name: string, extra: Partial<Snapshot['modules'][number]> = {}) => ({
  id,
  name,
  manufacturer_id: 3,
  hp: 4,
  standard: 0,
  depth_mm: null,
  power_12v_ma: 10,
  power_m12v_ma: 0,
  power_5v_ma: null,
  description: null,
  tag_ids: [],
  ins: [],
  outs: [],
  panels: [],
  ...extra,
});
const snapshot: Snapshot = {
  ...base,
  modules: [
    module(5, 'osc 10', { tag_ids: [9, 2], panels: [{ name: 'Black', hp: 4, color: null }] }),
    module(2, 'Osc 2', { manufacturer_id: 1, ins: [{ name: 'V/Oct', signal: 'pitch' }] }),
    module(7, 'Ösc 2', { hp: 8 }),
  ],
};
const oracle = new Oracle({ snapshot, keys: [KEY] });
const get = (path: string, query = '', book?: CursorBook) =>
  oracle.answer({ method: 'GET', path, query, authorization: `Bearer ${KEY}` } satisfies OracleRequest, book);
const ids = (body: string | undefined) => (JSON.parse(body!).data as { id: number }[]).map((r) => r.id);

describe('reference oracle', () => {
  it('sorts by id by default and by natural, accent-insensitive name with ties by id', () => {
    expect(ids(get('/v1/modules').body)).toEqual([2, 5, 7]);
    expect(ids(get('/v1/modules', 'sort=name').body)).toEqual([2, 7, 5]);
    expect(ids(get('/v1/manufacturers', 'sort=name').body)).toEqual([3, 1]);
  });

  it('projects id ∪ fields ∪ include in schema order, nested keys sorted', () => {
    const { body } = get('/v1/modules', 'include=panels,tags&fields=hp,name,hp&tag=2');
    expect(body).toBe(
      '{"data":[{"id":5,"name":"osc 10","hp":4,"tags":[{"id":2,"name":"Filter","type":null},' +
        '{"id":9,"name":"VCO","type":"source"}],"panels":[{"color":null,"hp":4,"name":"Black"}]}],' +
        '"page":{"next_cursor":null}}',
    );
  });

  it('pages with a cursor book', () => {
    const book = new CursorBook();
    const first = get('/v1/modules', 'limit=2&sort=name', book);
    expect(ids(first.body)).toEqual([2, 7]);
    expect(first.next).toEqual({ variant: 'modules&sort=name', offset: 2 });
    book.remember('c1', first.next!);
    expect(ids(get('/v1/modules', 'cursor=c1&sort=name&fields=name', book).body)).toEqual([5]);
    expect(get('/v1/modules', 'cursor=c1', book).code).toBe('invalid_parameter');
  });

  it('answers details, empty lists and errors', () => {
    expect(get('/v1/manufacturers/1', 'include=modules').body).toBe(
      '{"data":{"id":1,"name":"Mutable","country":null,"modules":[{"id":2,"name":"Osc 2","manufacturer_id":1,' +
        '"hp":4,"standard":0,"depth_mm":null,"power_12v_ma":10,"power_m12v_ma":0,"power_5v_ma":null,' +
        '"description":null}]}}',
    );
    expect(get('/v1/modules', 'hp=99').body).toBe('{"data":[],"page":{"next_cursor":null}}');
    expect(get('/v1/modules/99').code).toBe('not_found');
    expect(get('/v1/modules/099').code).toBe('invalid_parameter');
    expect(get('/v1/modules/99', 'x=1').code).toBe('unknown_parameter');
    expect(get('/v1/modules', 'limit=1&limit=1&x=1&q=').code).toBe('unsupported_parameter');
    expect(get('/v1/modules', 'limit=1&limit=1').code).toBe('invalid_parameter');
    expect(get('/v1/modules', 'fields=name&fields=hp').body).toBe(get('/v1/modules', 'fields=hp,name').body);
    expect(get('/v1/modules', 'fields=name&fields=').code).toBe('invalid_parameter');
    expect(get('/v1/manufacturers/1', 'include=modules&include=modules').body).toBe(
      get('/v1/manufacturers/1', 'include=modules').body,
    );
    expect(get('/v1/modules', 'limit=101').code).toBe('invalid_parameter');
    expect(get('/v1/modules', 'fields=ins').code).toBe('invalid_parameter');
    expect(get('/v1/standards/0').code).toBe('not_found');
    expect(oracle.answer({ method: 'POST', path: '/v1/x', query: '' }).status).toBe(405);
    expect(oracle.answer({ method: 'GET', path: '/v1/x', query: '', authorization: 'bearer  x' }).code).toBe(
      'malformed_authorization',
    );
  });

  it('normalises opaque cursors only at the end of a body', () => {
    expect(normaliseCursor('{"data":[],"page":{"next_cursor":"abc_-1"}}')).toEqual({
      body: '{"data":[],"page":{"next_cursor":"<cursor>"}}',
      cursor: 'abc_-1',
    });
  });
});
