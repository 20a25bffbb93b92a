/** Splitting a raw query string into parameters, without URLSearchParams' silent repairs. */

export interface QueryParameter {
  /** The decoded name; `undefined` when its percent-encoding is malformed. */
  name: string | undefined;
  /** The decoded value (`''` for `name` and `name=`); `undefined` when its percent-encoding is malformed. */
  value: string | undefined;
}

/**
 * Split `a=1&b=x%2Cy` into parameters, decoding `%XX` (UTF-8) and `+` (space) as HTML forms do.
 * Empty members (`a=1&&b=2`, a trailing `&`) are not parameters and are skipped; malformed encodings are
 * kept as `undefined` so the caller can answer with the right error.
 * @example splitQuery('limit=5&fields=name%2Chp') // → [{name:'limit',value:'5'},{name:'fields',value:'name,hp'}]
 * @example splitQuery('limit') // → [{ name: 'limit', value: '' }]
 */
export function splitQuery(raw: string): QueryParameter[] {
  const parameters: QueryParameter[] = [];
  if (raw === '') return parameters;
  for (const member of raw.split('&')) {
    if (member === '') continue;
    const equals = member.indexOf('=');
    const rawName = equals < 0 ? member : member.slice(0, equals);
    const rawValue = equals < 0 ? '' : member.slice(equals + 1);
    parameters.push({ name: decodeComponent(rawName), value: decodeComponent(rawValue) });
  }
  return parameters;
}

function decodeComponent(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}
