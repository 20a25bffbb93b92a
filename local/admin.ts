/**
 * The key-administration API of `npm start`: the admin core (admin/) on `node:http` at 127.0.0.1, every
 * request checked as a function URL with AWS_IAM checks it — a SigV4 signature (service `lambda`) made with
 * local credentials that `npm start` generates once per data directory (`admin-credentials.json`, mode 0600)
 * and prints. So the publisher's application is developed against what it will call on AWS.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type LocalCredentials, sigV4Check } from '@catalogue/local-aws';
import { AdminTables } from '../admin/dynamo.js';
import { type AuditLine, createAdminHandler } from '../admin/http/handler.js';
import { createAdminServer } from '../admin/http/node.js';
import { adminSettings } from '../admin/settings.js';
import { awsRegion, leanDynamo } from '../aws/sdk.js';

/** Where `npm start` keeps the local admin credentials (a secret of this machine only: mode 0600). */
export const ADMIN_CREDENTIALS_FILE = 'admin-credentials.json';

/** The caller every locally signed request is taken for. */
const LOCAL_PRINCIPAL = { arn: 'arn:aws:iam::000000000000:user/local-admin', accountId: '000000000000' };

/** The credentials of this data directory: read, or made once. */
export function localAdminCredentials(directory: string): LocalCredentials {
  const file = join(directory, ADMIN_CREDENTIALS_FILE);
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalCredentials>;
    if (/^LOCAL[A-Z0-9]{15}$/.test(kept.accessKeyId ?? '') && (kept.secretAccessKey?.length ?? 0) >= 40) {
      return kept as LocalCredentials;
    }
  } catch {
    // none yet
  }
  const credentials = {
    accessKeyId: `LOCAL${randomBytes(15).toString('hex').toUpperCase().slice(0, 15)}`,
    secretAccessKey: randomBytes(30).toString('base64url'),
  };
  writeFileSync(`${file}.next`, `${JSON.stringify(credentials)}\n`, { mode: 0o600 });
  renameSync(`${file}.next`, file);
  return credentials;
}

export interface LocalAdmin {
  /** `http://127.0.0.1:<port>/v1` */
  url: string;
  region: string;
  credentials: LocalCredentials;
  server: Server;
}

export interface LocalAdminOptions {
  env: Record<string, string | undefined>;
  dynamodbEndpoint: string;
  keysTable: string;
  countersTable: string;
  /** The data directory (its credentials). */
  directory: string;
  /** 0: a free port. */
  port: number;
  log?: (line: AuditLine) => void;
  /** The admin core's clock (tests move it); the signature check keeps the real one. */
  now?: () => Date;
}

/**
 * Serve the admin API on 127.0.0.1.
 * @example const admin = await startLocalAdmin({ env: process.env, dynamodbEndpoint, keysTable, countersTable, directory: '.local', port: 0 });
 */
export async function startLocalAdmin(options: LocalAdminOptions): Promise<LocalAdmin> {
  const settings = adminSettings({
    ...options.env,
    KEYS_TABLE: options.keysTable,
    COUNTERS_TABLE: options.countersTable,
  });
  const region = awsRegion(options.env.AWS_REGION?.trim() || undefined);
  const credentials = localAdminCredentials(options.directory);
  const dynamo = leanDynamo(options.dynamodbEndpoint);
  const tables = new AdminTables({
    dynamo,
    keysTable: settings.keysTable,
    countersTable: settings.countersTable,
  });
  const handle = createAdminHandler({
    context: { tables, settings, now: options.now ?? (() => new Date()) },
    log: options.log ?? ((line) => process.stdout.write(`${JSON.stringify(line)}\n`)),
  });
  const server = createAdminServer(
    handle,
    sigV4Check({ credentials, region, service: 'lambda', principal: LOCAL_PRINCIPAL }),
  );
  server.on('close', () => void dynamo.close());
  await new Promise<void>((ready, fail) => {
    server.once('error', fail);
    server.listen(options.port, '127.0.0.1', () => ready());
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, region, credentials, server };
}

/** The ready screen's lines about it: the URL (a line with the word `admin`) and how to sign. */
export function localAdminLines(admin: LocalAdmin): string[] {
  return [
    `Key administration API (admin, SigV4-signed, service lambda, region ${admin.region}): ${admin.url}`,
    'Its local admin credentials (kept in the data directory), to sign with (docs/admin-api.md):',
    `  export CATALOGUE_ADMIN_URL=${admin.url}`,
    `  export CATALOGUE_ADMIN_ACCESS_KEY_ID=${admin.credentials.accessKeyId}`,
    `  export CATALOGUE_ADMIN_SECRET_ACCESS_KEY=${admin.credentials.secretAccessKey}`,
    `  export CATALOGUE_ADMIN_REGION=${admin.region}`,
  ];
}
