/**
 * The scheduled check's key, provisioned at deploy by a CloudFormation custom resource (infra/scheduled-check.ts):
 * a key of its own, made here with the keys' one generator, its plain form kept in a Secrets Manager secret the
 * check functions (and `npm run smoke -- --stack`) read, its hash registered in the keys table with `register`
 * (no owner, partner limits that a check a minute never exhausts). Only this deploy-time function may write
 * the keys table for it; the check functions can only read the secret.
 *
 * - Create, and Update (the keys table switched by `keysTableName`, the limits changed): the key the secret holds
 *   is registered in the table the stack uses now; a secret that holds no key yet (its first, generated value)
 *   gets a new one first.
 * - Update with a raised `Generation` (`checkKeyGeneration`): the held key is revoked and a new one made.
 * - Delete: the held key is revoked; a failure is logged, never blocks the stack's deletion.
 * The resource's physical id never changes, so CloudFormation never replaces (and deletes) it on an update.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { LeanDynamo } from '../aws/dynamodb.js';
import { awsRegion, endpointSetting, roleCredentials } from '../aws/env.js';
import { getSecretString, putSecretString, secretsClient } from '../aws/secrets.js';
import type { SignedClient } from '../aws/signed.js';
import { errorMessage } from '../store/errors.js';
import { API_KEY_PATTERN, generateApiKey, hashApiKey } from '../tables/keys.js';
import { register } from './actions.js';
import { AdminTables } from './dynamo.js';

/** The physical id of the one check key resource of a stack. */
export const CHECK_KEY_RESOURCE_ID = 'scheduled-check-key';

/** The resource's properties (strings: CloudFormation passes every property as one). */
export interface CheckKeyProperties {
  KeysTable: string;
  /** Where a revoke's stop is lifted when the key is registered (admin/stop.ts). */
  CountersTable: string;
  SecretArn: string;
  Label: string;
  LimitMinute: string;
  LimitMonth: string;
  Generation: string;
}

/** A CloudFormation custom resource request. */
export interface CustomResourceEvent {
  RequestType: 'Create' | 'Update' | 'Delete';
  ResponseURL: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  PhysicalResourceId?: string;
  ResourceProperties: CheckKeyProperties;
  OldResourceProperties?: CheckKeyProperties;
}

/** Where the key is kept and registered (the function role's clients; tests pass local ones). */
export interface CheckKeyDeps {
  secrets: SignedClient;
  tables: (names: { keysTable: string; countersTable: string }) => AdminTables;
  log: (line: Record<string, unknown>) => void;
}

/** A positive whole number property, or an error naming it. */
function count(properties: CheckKeyProperties, name: 'LimitMinute' | 'LimitMonth'): number {
  const value = Number(properties[name]);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

/** The tables the resource's properties name. */
const tablesOf = (deps: CheckKeyDeps, properties: CheckKeyProperties) =>
  deps.tables({ keysTable: properties.KeysTable, countersTable: properties.CountersTable });

/** Revoke `key` in the properties' keys table (nothing when the table has no such key). */
async function revoke(deps: CheckKeyDeps, properties: CheckKeyProperties, key: string): Promise<void> {
  const revoked = await tablesOf(deps, properties).revokeKey(hashApiKey(key));
  deps.log({
    type: 'check_key',
    action: 'revoked',
    key_id: revoked?.keyId ?? null,
    table: properties.KeysTable,
  });
}

/** Create or Update: the key in the secret (a new one when it holds none, or on a new generation), registered. */
async function provision(deps: CheckKeyDeps, event: CustomResourceEvent): Promise<{ KeyId: string }> {
  const properties = event.ResourceProperties;
  const limits = { minute: count(properties, 'LimitMinute'), month: count(properties, 'LimitMonth') };
  let key = await getSecretString(deps.secrets, properties.SecretArn);
  const old = event.OldResourceProperties;
  const rotate = old !== undefined && old.Generation !== properties.Generation;
  if (rotate && API_KEY_PATTERN.test(key)) await revoke(deps, properties, key);
  if (rotate || !API_KEY_PATTERN.test(key)) {
    key = generateApiKey();
    await putSecretString(deps.secrets, properties.SecretArn, key);
  }
  const record = await register(tablesOf(deps, properties), key, {
    tier: 'partner',
    limits,
    label: properties.Label,
  });
  deps.log({ type: 'check_key', action: 'registered', key_id: record.keyId, table: properties.KeysTable });
  return { KeyId: record.keyId };
}

/**
 * What the resource answers CloudFormation: its physical id, its key id (`Fn::GetAtt … KeyId`), or why it failed.
 * @example const answer = await checkKeyAnswer(deps, event);
 */
export async function checkKeyAnswer(
  deps: CheckKeyDeps,
  event: CustomResourceEvent,
): Promise<{ Status: 'SUCCESS' | 'FAILED'; Reason?: string; Data?: { KeyId: string } }> {
  try {
    if (event.RequestType !== 'Delete') return { Status: 'SUCCESS', Data: await provision(deps, event) };
    const key = await getSecretString(deps.secrets, event.ResourceProperties.SecretArn);
    if (API_KEY_PATTERN.test(key)) await revoke(deps, event.ResourceProperties, key);
    return { Status: 'SUCCESS' };
  } catch (error) {
    deps.log({ type: 'check_key', level: 'error', request: event.RequestType, error: errorMessage(error) });
    // A deletion that cannot revoke (a table or secret already gone) must not keep the stack from going.
    if (event.RequestType === 'Delete') return { Status: 'SUCCESS', Reason: errorMessage(error) };
    return { Status: 'FAILED', Reason: `the check key could not be provisioned: ${errorMessage(error)}` };
  }
}

/** PUT the answer to CloudFormation's pre-signed URL (no content type: the URL's signature covers none). */
export function sendAnswer(event: CustomResourceEvent, answer: object): Promise<void> {
  const body = JSON.stringify({
    ...answer,
    PhysicalResourceId: CHECK_KEY_RESOURCE_ID,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
  });
  const url = new URL(event.ResponseURL);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const put = send(
      url,
      { method: 'PUT', headers: { 'content-type': '', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        response.resume();
        response.on('end', () =>
          (response.statusCode ?? 500) < 300
            ? resolve()
            : reject(new Error(`the answer was refused: ${response.statusCode}`)),
        );
      },
    );
    put.on('error', reject);
    put.end(body);
  });
}

/** The function's entry: answer CloudFormation, whatever happened. */
export async function handler(event: CustomResourceEvent): Promise<void> {
  const secretsEndpoint = endpointSetting('secretsmanager')?.value;
  const dynamoEndpoint = endpointSetting('dynamodb')?.value;
  const secrets = secretsClient(event.ResourceProperties.SecretArn, {
    endpoint: secretsEndpoint,
    credentials: roleCredentials(secretsEndpoint),
  });
  const dynamo = new LeanDynamo({
    endpoint: dynamoEndpoint,
    region: awsRegion(),
    credentials: roleCredentials(dynamoEndpoint),
  });
  try {
    const log = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
    const tables = (names: { keysTable: string; countersTable: string }) =>
      new AdminTables({ dynamo, ...names });
    await sendAnswer(event, await checkKeyAnswer({ secrets, tables, log }, event));
  } finally {
    await Promise.all([secrets.close(), dynamo.close()]);
  }
}
