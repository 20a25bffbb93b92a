import { describe, expect, it } from 'vitest';
import { fullMask, moduleMask } from '../../../proxy/request/mask.js';
import { parseRequest } from '../../../proxy/request/plan.js';

/** The error code (or 'ok') the parser gives for GET path?query. */
function codeOf(path: string, query = '', method = 'GET'): string {
  const outcome = parseRequest(method, path, query);
  return outcome.ok ? 'ok' : outcome.error.code;
}

describe('parseRequest: routes', () => {
  it.each([
    ['/v1/modules', 'ok'],
    ['/v1/modules/1', 'ok'],
    ['/v1/manufacturers', 'ok'],
    ['/v1/manufacturers/9007199254740991', 'ok'],
    ['/v1/standards', 'ok'],
    ['/v1/tags', 'ok'],
    ['/v1/nope', 'not_found'],
    ['/v1/standards/0', 'not_found'],
    ['/v1/tags/1', 'not_found'],
    ['/v1/modules/', 'not_found'],
    ['/v1/modules/1/ins', 'not_found'],
    ['/v1', 'not_found'],
    ['/', 'not_found'],
    ['/V1/modules', 'not_found'],
    ['/v1/Modules', 'not_found'],
    ['//v1/modules', 'not_found'],
    ['/v2/modules', 'not_found'],
    ['/v1/modules/abc', 'invalid_parameter'],
    ['/v1/modules/0', 'invalid_parameter'],
    ['/v1/modules/01', 'invalid_parameter'],
    ['/v1/modules/-1', 'invalid_parameter'],
    ['/v1/modules/1.0', 'invalid_parameter'],
    ['/v1/modules/%31', 'invalid_parameter'],
    ['/v1/modules/9007199254740992', 'invalid_parameter'],
    ['/v1/manufacturers/x', 'invalid_parameter'],
  ])('GET %s → %s', (path, code) => {
    expect(codeOf(path)).toBe(code);
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'CONNECT', 'get', 'Get', 'FOO'])(
    '%s is method_not_allowed on known and unknown paths alike',
    (method) => {
      expect(codeOf('/v1/modules', '', method)).toBe('method_not_allowed');
      expect(codeOf('/nowhere', 'q=1', method)).toBe('method_not_allowed');
    },
  );

  it.each(['GET', 'HEAD', 'OPTIONS'])('%s is allowed', (method) => {
    expect(codeOf('/v1/tags', '', method)).toBe('ok');
  });

  it('names the route template for the log line', () => {
    expect(
      parseRequest('GET', '/v1/modules/5', '').ok && parseRequest('GET', '/v1/modules/5', ''),
    ).toMatchObject({
      route: '/v1/modules/{id}',
    });
    expect(parseRequest('GET', '/v1/nope', '')).toMatchObject({ route: 'unknown' });
    expect(parseRequest('GET', '/v1/modules/abc', '')).toMatchObject({ route: '/v1/modules/{id}' });
  });
});

describe('parseRequest: parameters of the module list', () => {
  it.each([
    // limit
    ['limit=1', 'ok'],
    ['limit=100', 'ok'],
    ['limit=50', 'ok'],
    ['limit=0', 'invalid_parameter'],
    ['limit=101', 'invalid_parameter'],
    ['limit=-1', 'invalid_parameter'],
    ['limit=05', 'invalid_parameter'],
    ['limit=5.0', 'invalid_parameter'],
    ['limit=1e2', 'invalid_parameter'],
    ['limit=+5', 'invalid_parameter'],
    ['limit=%205', 'invalid_parameter'],
    ['limit=abc', 'invalid_parameter'],
    ['limit=', 'invalid_parameter'],
    ['limit', 'invalid_parameter'],
    ['limit=1&limit=1', 'invalid_parameter'],
    ['limit=1&limit=2', 'invalid_parameter'],
    ['limit=&limit=2', 'invalid_parameter'],
    ['limit=%35', 'ok'],
    ['%6Cimit=5', 'ok'],
    // sort
    ['sort=id', 'ok'],
    ['sort=name', 'ok'],
    ['sort=NAME', 'invalid_parameter'],
    ['sort=-name', 'invalid_parameter'],
    ['sort=hp', 'invalid_parameter'],
    ['sort=', 'invalid_parameter'],
    ['sort=id&sort=id', 'invalid_parameter'],
    // cursor (its content is checked by the catalogue, against the query)
    ['cursor=abc', 'ok'],
    ['cursor=', 'invalid_parameter'],
    ['cursor=a&cursor=a', 'invalid_parameter'],
    // fields
    ['fields=name', 'ok'],
    ['fields=id', 'ok'],
    ['fields=name,hp,manufacturer_id,standard', 'ok'],
    ['fields=name%2Chp', 'ok'],
    ['fields=hp,hp', 'ok'],
    ['fields=ins', 'invalid_parameter'],
    ['fields=panels', 'invalid_parameter'],
    ['fields=image_url', 'invalid_parameter'],
    ['fields=Name', 'invalid_parameter'],
    ['fields=name,', 'invalid_parameter'],
    ['fields=,name', 'invalid_parameter'],
    ['fields=name,,hp', 'invalid_parameter'],
    ['fields=name hp', 'invalid_parameter'],
    ['fields=', 'invalid_parameter'],
    // fields repeated: one set (what OpenAPI generators send for an array)
    ['fields=name&fields=hp', 'ok'],
    ['fields=name,hp&fields=id&fields=hp', 'ok'],
    ['fields=name&fields=', 'invalid_parameter'],
    ['fields=&fields=name', 'invalid_parameter'],
    ['fields=name&fields=ins', 'invalid_parameter'],
    ['fields=name&fields=%ZZ', 'invalid_parameter'],
    ['fields[]=name&fields[]=hp', 'ok'],
    ['fields%5B%5D=name&fields=hp', 'ok'],
    ['fields[]=ins', 'invalid_parameter'],
    ['fields[0]=name', 'unknown_parameter'],
    ['fields[]]=name', 'unknown_parameter'],
    ['limit[]=5', 'unknown_parameter'],
    ['q[]=x', 'unknown_parameter'],
    // include
    ['include=ins,outs,tags,panels', 'ok'],
    ['include=tags', 'ok'],
    ['include=modules', 'invalid_parameter'],
    ['include=name', 'invalid_parameter'],
    ['include=TAGS', 'invalid_parameter'],
    ['include=tags,', 'invalid_parameter'],
    ['include=', 'invalid_parameter'],
    ['include=tags&include=ins', 'ok'],
    ['include=tags&include=tags', 'ok'],
    ['include=tags&include=name', 'invalid_parameter'],
    ['include=tags&include', 'invalid_parameter'],
    // filters
    ['manufacturer_id=1', 'ok'],
    ['manufacturer_id=0', 'invalid_parameter'],
    ['manufacturer_id=-3', 'invalid_parameter'],
    ['manufacturer_id=x', 'invalid_parameter'],
    ['manufacturer_id=9007199254740991', 'ok'],
    ['manufacturer_id=9007199254740992', 'invalid_parameter'],
    ['tag=7', 'ok'],
    ['tag=0', 'invalid_parameter'],
    ['tag=07', 'invalid_parameter'],
    ['standard=0', 'ok'],
    ['standard=1', 'ok'],
    ['standard=00', 'invalid_parameter'],
    ['standard=-1', 'invalid_parameter'],
    ['hp=4', 'ok'],
    ['hp=0', 'invalid_parameter'],
    ['hp=4.5', 'invalid_parameter'],
    ['hp=4&tag=1&standard=0&manufacturer_id=2', 'ok'],
    // names are case-sensitive and closed
    ['Limit=5', 'unknown_parameter'],
    ['LIMIT=5', 'unknown_parameter'],
    ['offset=5', 'unknown_parameter'],
    ['page=2', 'unknown_parameter'],
    ['=5', 'unknown_parameter'],
    ['%ZZ=5', 'unknown_parameter'],
    ['limit=%ZZ', 'invalid_parameter'],
    ['limit=%E2%82', 'invalid_parameter'],
    // q is reserved
    ['q=moog', 'unsupported_parameter'],
    ['q=', 'unsupported_parameter'],
    ['q', 'unsupported_parameter'],
    // empty members are not parameters
    ['', 'ok'],
    ['&', 'ok'],
    ['limit=5&&sort=id&', 'ok'],
  ])('/v1/modules?%s → %s', (query, code) => {
    expect(codeOf('/v1/modules', query)).toBe(code);
  });
});

describe('parseRequest: which parameters each endpoint defines', () => {
  const moduleOnly = ['fields=name', 'include=tags', 'manufacturer_id=1', 'hp=4', 'standard=0', 'tag=1'];
  it.each(['/v1/manufacturers', '/v1/standards', '/v1/tags'])(
    '%s takes limit, cursor and sort only',
    (path) => {
      for (const query of ['limit=5', 'cursor=x', 'sort=name']) expect(codeOf(path, query)).toBe('ok');
      for (const query of [...moduleOnly, 'include=modules'])
        expect(codeOf(path, query)).toBe('unknown_parameter');
    },
  );

  it.each([
    ['/v1/modules/1', 'include=ins,outs,tags,panels', 'ok'],
    ['/v1/modules/1', 'include=modules', 'invalid_parameter'],
    ['/v1/modules/1', 'fields=name', 'unknown_parameter'],
    ['/v1/modules/1', 'limit=5', 'unknown_parameter'],
    ['/v1/modules/1', 'cursor=x', 'unknown_parameter'],
    ['/v1/modules/1', 'sort=id', 'unknown_parameter'],
    ['/v1/manufacturers/1', 'include=modules', 'ok'],
    ['/v1/manufacturers/1', 'include=modules,modules', 'ok'],
    ['/v1/manufacturers/1', 'include=tags', 'invalid_parameter'],
    ['/v1/manufacturers/1', 'include=', 'invalid_parameter'],
    ['/v1/manufacturers/1', 'limit=5', 'unknown_parameter'],
    ['/v1/manufacturers/1', 'q=x', 'unsupported_parameter'],
  ])('%s?%s → %s', (path, query, code) => {
    expect(codeOf(path, query)).toBe(code);
  });
});

describe('parseRequest: precedence', () => {
  it.each([
    ['/v1/modules', 'limit=0&foo=1&q=x', 'unsupported_parameter'],
    ['/v1/modules', 'q=x&foo=1', 'unsupported_parameter'],
    ['/v1/modules', 'limit=0&foo=1', 'unknown_parameter'],
    ['/v1/modules', 'foo=1&limit=0', 'unknown_parameter'],
    ['/v1/modules/abc', 'foo=1', 'unknown_parameter'],
    ['/v1/modules/abc', 'q=1', 'unsupported_parameter'],
    ['/v1/modules/abc', 'include=tags', 'invalid_parameter'],
    ['/v1/nope', 'q=1&limit=0', 'not_found'],
  ])('%s?%s → %s', (path, query, code) => {
    expect(codeOf(path, query)).toBe(code);
  });

  it('405 outranks everything the parser knows', () => {
    expect(codeOf('/v1/nope', 'q=1', 'DELETE')).toBe('method_not_allowed');
  });
});

describe('parseRequest: canonical plans', () => {
  it('defaults: limit 50, sort id, every field, no relations', () => {
    expect(parseRequest('GET', '/v1/modules', '')).toMatchObject({
      ok: true,
      plan: {
        kind: 'list',
        limit: 50,
        sort: 'id',
        variant: 'modules?sort=id',
        mask: moduleMask(undefined, []),
      },
    });
  });

  it('filters in any order give one variant key, sort explicit', () => {
    const a = parseRequest('GET', '/v1/modules', 'tag=5&hp=4&sort=name');
    const b = parseRequest('GET', '/v1/modules', 'sort=name&hp=4&tag=5');
    expect(a).toMatchObject({ ok: true, plan: { variant: 'modules?hp=4&sort=name&tag=5' } });
    expect(b).toEqual(a);
  });

  it('fields and include are sets: order and repeats do not change the plan', () => {
    const a = parseRequest('GET', '/v1/modules', 'fields=hp,name&include=tags,ins');
    const b = parseRequest('GET', '/v1/modules', 'fields=name,hp,hp&include=ins,tags,ins');
    expect(b).toEqual(a);
    expect(a).toMatchObject({ plan: { mask: moduleMask(['name', 'hp'], ['ins', 'tags']) } });
  });

  it('fields and include given repeated are the same sets as one comma list', () => {
    const comma = parseRequest('GET', '/v1/modules', 'fields=name,hp&include=tags,ins&sort=name&hp=4');
    for (const query of [
      'fields=name&fields=hp&include=tags&include=ins&sort=name&hp=4',
      'include=ins&fields=hp&hp=4&include=tags&sort=name&fields=name',
      'fields=hp,name&fields=name&include=ins,tags&include=tags&sort=name&hp=4',
    ]) {
      expect(parseRequest('GET', '/v1/modules', query)).toEqual(comma);
    }
    expect(
      parseRequest(
        'GET',
        '/v1/modules',
        'fields[]=name&fields[]=hp&include[]=tags&include=ins&sort=name&hp=4',
      ),
    ).toEqual(comma);
    expect(parseRequest('GET', '/v1/modules/7', 'include=panels&include=outs')).toEqual(
      parseRequest('GET', '/v1/modules/7', 'include=outs,panels'),
    );
    expect(parseRequest('GET', '/v1/manufacturers/3', 'include=modules&include=modules')).toEqual(
      parseRequest('GET', '/v1/manufacturers/3', 'include=modules'),
    );
  });

  it('non-module lists keep every fragment', () => {
    expect(parseRequest('GET', '/v1/tags', 'sort=name')).toMatchObject({
      plan: { variant: 'tags?sort=name', mask: fullMask('tag') },
    });
  });

  it('details carry their id and mask', () => {
    expect(parseRequest('GET', '/v1/modules/42', 'include=panels')).toMatchObject({
      plan: { kind: 'detail', resource: 'modules', id: 42, mask: moduleMask(undefined, ['panels']) },
    });
    expect(parseRequest('HEAD', '/v1/manufacturers/3', 'include=modules')).toMatchObject({
      method: 'HEAD',
      plan: { kind: 'detail', resource: 'manufacturers', id: 3, mask: fullMask('manufacturerDetail') },
    });
    expect(parseRequest('GET', '/v1/manufacturers/3', '')).toMatchObject({
      plan: { mask: fullMask('manufacturer') },
    });
  });

  it('messages never echo a value or an unusual name', () => {
    const key = 'pk_live_AAAAAAAAAAAAAAAAAAAAAA';
    for (const query of [`${key}=1`, `limit=${key}`, `cursor=x&cursor=${key}`]) {
      const outcome = parseRequest('GET', '/v1/modules', query);
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.error.message).not.toContain('pk_live_');
    }
  });
});

describe('parseRequest: messages that help', () => {
  const messageOf = (path: string, query: string) => {
    const outcome = parseRequest('GET', path, query);
    return outcome.ok ? 'ok' : `${outcome.error.code}: ${outcome.error.message}`;
  };

  it.each([
    [
      '/v1/modules',
      'Limit=5',
      'unknown_parameter: `Limit` is not a parameter of this endpoint; parameter names are case-sensitive: did you mean `limit`?',
    ],
    [
      '/v1/modules',
      'limt=5',
      'unknown_parameter: `limt` is not a parameter of this endpoint; did you mean `limit`?',
    ],
    [
      '/v1/modules',
      'Tag=3',
      'unknown_parameter: `Tag` is not a parameter of this endpoint; parameter names are case-sensitive: did you mean `tag`?',
    ],
    [
      '/v1/tags',
      'fields=name',
      'unknown_parameter: `fields` is not a parameter of this endpoint; its parameters are: limit, cursor, sort.',
    ],
    [
      '/v1/modules/1',
      'includes=ins',
      'unknown_parameter: `includes` is not a parameter of this endpoint; did you mean `include`?',
    ],
    [
      '/v1/modules',
      'sort=NAME',
      'invalid_parameter: sort must be "id" or "name"; values are case-sensitive: did you mean `name`?',
    ],
    ['/v1/tags', 'sort=nmae', 'invalid_parameter: sort must be "id" or "name"; did you mean `name`?'],
    ['/v1/tags', 'sort=size', 'invalid_parameter: sort must be "id" or "name".'],
  ])('GET %s?%s → %s', (path, query, expected) => {
    expect(messageOf(path, query)).toBe(expected);
  });

  it.each([
    [
      '/v1/modules',
      'limit=1&limit=2',
      'invalid_parameter: limit was given more than once; send it once (only fields and include may be repeated).',
    ],
    [
      '/v1/modules',
      'limit=abc&limit=2',
      'invalid_parameter: limit was given more than once; send it once (only fields and include may be repeated).',
    ],
    ['/v1/tags', 'sort=id&sort=name', 'invalid_parameter: sort was given more than once; send it once.'],
    ['/v1/tags', 'limit=', 'invalid_parameter: limit is empty: send it once, with a value, or leave it out.'],
    [
      '/v1/modules/1',
      'include=ins&include=bogus',
      'invalid_parameter: include must be a comma-separated list of: ins, outs, tags, panels.',
    ],
    [
      '/v1/modules',
      'fields=name&fields=',
      'invalid_parameter: fields is empty: send it once, with a value, or leave it out.',
    ],
    [
      '/v1/tags',
      'fields[]=name',
      'unknown_parameter: `fields[]` is not a parameter of this endpoint; its parameters are: limit, cursor, sort.',
    ],
  ])('a repeated parameter: GET %s?%s → %s', (path, query, expected) => {
    expect(messageOf(path, query)).toBe(expected);
  });

  it('keeps the precedence: an unknown name with a suggestion still beats an invalid value', () => {
    expect(messageOf('/v1/modules', 'sort=NAME&Limit=5')).toMatch(/^unknown_parameter: `Limit`/);
    expect(messageOf('/v1/modules', 'Limit=5&q=x')).toMatch(/^unsupported_parameter/);
  });

  it('echoes names bounded and escaped, never a key', () => {
    const long = messageOf('/v1/modules', `${'x'.repeat(5000)}=1`);
    const control = messageOf('/v1/modules', 'a%00%0Ab=1');
    const key = messageOf('/v1/modules', 'my_pk_live_AAAAAAAAAAAAAAAAAAAAAA=1');

    expect(long.length).toBeLessThan(300);
    expect(long).toContain(`\`${'x'.repeat(40)}…\``);
    expect(control).toContain('`a\\u0000\\u000ab`');
    expect(key).toBe(
      'unknown_parameter: A parameter name that looks like an API key is not a parameter of this endpoint; send the key only in the Authorization header.',
    );
  });
});
