/**
 * The ready-to-paste command lines `npm start` prints for its own local servers, so a new user can manage
 * keys, publish and upload against them without looking up endpoints, credentials and table names: the commands
 * that find this npm start by themselves (keys, versions, rollback, unlock, upload) need nothing more than their
 * name. Pure: text in, text out.
 */
import { UPLOAD_PREFIXES } from '../store/upload-prefixes.js';

export interface LocalStack {
  /** The snapshot directory to publish edits from, as the user would type it (relative when possible). */
  source: string;
  /**
   * The directory to copy it from first, when `npm start` serves the repository's fixture: edits belong in a
   * copy, not in tracked files.
   */
  copyFrom?: string;
  s3Endpoint: string;
  bucket: string;
  /** '' or ending in '/'. */
  prefix: string;
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
 * The hint lines: the key CLI and the versions commands, which find this npm start by themselves (its data
 * directory's record, aws/local-stack.ts), and a publish to the local bucket (after a copy of the fixture, when
 * that is what it serves).
 * @example localCommandHints({ source: 'my-catalogue', copyFrom: 'fixtures/catalogue', s3Endpoint: 'http://127.0.0.1:4568',
 *   bucket: 'catalogue', prefix: '' })
 * // → ['Keys (issue, list, revoke, id, enable, limits, expire, roll, usage, owner, import): npm run keys -- list',
 * //    'Publish an edited copy of the catalogue (docs/publishing.md):',
 * //    '  cp -r fixtures/catalogue my-catalogue   # then edit my-catalogue/*.json',
 * //    '  npm run catalogue -- build --source my-catalogue --out s3://catalogue --endpoint http://127.0.0.1:4568',
 * //    'Its versions, and the one before made live again: npm run catalogue -- versions | rollback']
 */
export function localCommandHints(stack: LocalStack): string[] {
  const out = `s3://${stack.bucket}${stack.prefix ? `/${stack.prefix.replace(/\/+$/, '')}` : ''}`;
  const source = shellWord(stack.source);
  return [
    // Every command of `npm run keys` but create-tables (npm start has made them).
    'Keys (issue, list, revoke, id, enable, limits, expire, roll, usage, owner, import): npm run keys -- list',
    stack.copyFrom
      ? 'Publish an edited copy of the catalogue (docs/publishing.md):'
      : 'Publish it again after an edit:',
    ...(stack.copyFrom
      ? [`  cp -r ${shellWord(stack.copyFrom)} ${source}   # then edit ${source}/*.json`]
      : []),
    `  npm run catalogue -- build --source ${source} --out ${shellWord(out)} --endpoint ${shellWord(stack.s3Endpoint)}`,
    'Its versions, and the one before made live again: npm run catalogue -- versions | rollback',
  ];
}

/**
 * How to publish by upload into `npm start`: the command that checks, uploads and waits (it finds this npm start
 * by its data directory), and the same upload with the AWS CLI, the local S3's endpoint and credentials written
 * out (it accepts only its own: a developer's AWS credentials are never sent to it).
 * @example uploadHints({ source: 'my-catalogue', bucket: 'catalogue', s3Endpoint: 'http://127.0.0.1:4568',
 *   credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } })
 * // → ['  npm run catalogue -- upload my-catalogue   # checks, uploads, waits for the report and says the outcome',
 * //    '  or with the AWS CLI (the local S3 takes only its own credentials):',
 * //    '  tar czf snapshot.tar.gz -C my-catalogue . && AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER aws s3 cp snapshot.tar.gz s3://catalogue/incoming/$(date -u +%Y%m%dT%H%M%SZ).tar.gz --endpoint-url http://127.0.0.1:4568']
 */
export function uploadHints(stack: {
  source: string;
  bucket: string;
  s3Endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}): string[] {
  const source = shellWord(stack.source);
  const { accessKeyId, secretAccessKey } = stack.credentials;
  const credentials = `AWS_ACCESS_KEY_ID=${shellWord(accessKeyId)} AWS_SECRET_ACCESS_KEY=${shellWord(secretAccessKey)}`;
  const incoming = shellWord(`s3://${stack.bucket}/${UPLOAD_PREFIXES.incomingPrefix}`);
  return [
    `  npm run catalogue -- upload ${source}   # checks, uploads, waits for the report and says the outcome`,
    '  or with the AWS CLI (the local S3 takes only its own credentials):',
    `  tar czf snapshot.tar.gz -C ${source} . && ${credentials} aws s3 cp snapshot.tar.gz ${incoming}$(date -u +%Y%m%dT%H%M%SZ).tar.gz --endpoint-url ${shellWord(stack.s3Endpoint)}`,
  ];
}

/**
 * The lines to paste into another shell: the dev key, the API's base URL and the local S3 endpoint, as the
 * publisher's guide uses them.
 * @example pasteLines({ key: 'pk_live_…', url: 'http://127.0.0.1:8787/v1', s3Endpoint: 'http://127.0.0.1:4568' })
 * // → ['  export CATALOGUE_KEY=pk_live_…', '  export CATALOGUE_URL=http://127.0.0.1:8787/v1',
 * //    '  export CATALOGUE_S3_ENDPOINT=http://127.0.0.1:4568']
 */
export function pasteLines(stack: { key: string; url: string; s3Endpoint: string }): string[] {
  return [
    `  export CATALOGUE_KEY=${shellWord(stack.key)}`,
    `  export CATALOGUE_URL=${shellWord(stack.url)}`,
    `  export CATALOGUE_S3_ENDPOINT=${shellWord(stack.s3Endpoint)}`,
  ];
}

/**
 * How to walk a large catalogue without waiting out 429s: the free dev key allows 60 requests a minute, so a
 * walk of 25,000 modules (250 pages of 100) would take minutes. A partner-tier key is one restart away, with a
 * key made up for the purpose; when one is seeded already, its limits.
 * @example partnerKeyHint({ seeded: 0, limits: { minute: 600, month: 1000000 }, key: 'pk_live_…', free: { minute: 60, month: 5000 } })
 * // → ['More requests (a partner-tier key, 600/minute and 1000000/month instead of 60 and 5000): restart with',
 * //    '  CATALOGUE_DEV_KEYS=partner:pk_live_… npm start']
 */
export function partnerKeyHint(options: {
  /** Partner keys seeded from CATALOGUE_DEV_KEYS. */
  seeded: number;
  limits: { minute: number; month: number };
  /** A fresh key to suggest. */
  key: string;
  /** The free tier's limits, to compare. */
  free: { minute: number; month: number };
}): string[] {
  const { minute, month } = options.limits;
  const { free } = options;
  if (options.seeded > 0) {
    return [`Partner-tier key(s) from CATALOGUE_DEV_KEYS: ${minute}/minute and ${month}/month each.`];
  }
  return [
    `More requests (a partner-tier key, ${minute}/minute and ${month}/month instead of ${free.minute} and ${free.month}): restart with`,
    `  CATALOGUE_DEV_KEYS=partner:${shellWord(options.key)} npm start`,
  ];
}
