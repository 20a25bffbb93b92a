/**
 * The ready-to-paste command lines `npm start` prints for its own local servers, so a new user can manage
 * keys and publish against them without looking up endpoints and table names. Pure: text in, text out.
 */

export interface LocalStack {
  /** The snapshot directory `npm start` published, as the user would type it (relative when possible). */
  source: string;
  s3Endpoint: string;
  bucket: string;
  /** '' or ending in '/'. */
  prefix: string;
  dynamodbEndpoint: string;
  keysTable: string;
  countersTable: string;
}

/**
 * `value` as one shell word: unchanged when it holds only safe characters, otherwise single-quoted.
 * @example shellWord('fixtures/catalogue') // → 'fixtures/catalogue'
 * @example shellWord("my dir's") // → `'my dir'\''s'`
 */
export function shellWord(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * The hint lines: the key CLI against the local tables, and a publish to the local bucket.
 * @example localCommandHints({ source: 'fixtures/catalogue', s3Endpoint: 'http://127.0.0.1:4568', bucket: 'catalogue',
 *   prefix: '', dynamodbEndpoint: 'http://127.0.0.1:4569', keysTable: 'catalogue-keys', countersTable: 'catalogue-counters' })
 * // → ['Keys (list, issue, revoke, usage):',
 * //    '  KEYS_TABLE=catalogue-keys COUNTERS_TABLE=catalogue-counters DYNAMODB_ENDPOINT=http://127.0.0.1:4569 npm run keys -- list',
 * //    'Publish an edited catalogue:',
 * //    '  npm run catalogue -- build --source fixtures/catalogue --out s3://catalogue --endpoint http://127.0.0.1:4568']
 */
export function localCommandHints(stack: LocalStack): string[] {
  const out = `s3://${stack.bucket}${stack.prefix ? `/${stack.prefix.replace(/\/+$/, '')}` : ''}`;
  const keysEnv = [
    `KEYS_TABLE=${shellWord(stack.keysTable)}`,
    `COUNTERS_TABLE=${shellWord(stack.countersTable)}`,
    `DYNAMODB_ENDPOINT=${shellWord(stack.dynamodbEndpoint)}`,
  ].join(' ');
  return [
    'Keys (list, issue, revoke, usage):',
    `  ${keysEnv} npm run keys -- list`,
    'Publish an edited catalogue:',
    `  npm run catalogue -- build --source ${shellWord(stack.source)} --out ${shellWord(out)} --endpoint ${shellWord(stack.s3Endpoint)}`,
  ];
}
