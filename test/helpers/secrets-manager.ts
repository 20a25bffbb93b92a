/**
 * A Secrets Manager stand-in on loopback: GetSecretValue and PutSecretValue (JSON 1.1) over an in-memory map of
 * secret ids to string values, every call recorded. A missing secret is `ResourceNotFoundException`, as AWS
 * answers; `refuse` makes every call of one operation answer `AccessDeniedException` (a role without it).
 */
import { createServer, type Server } from 'node:http';
import { closeServer, listenOnLoopback } from './loopback.js';

export interface SecretsManagerStandIn {
  endpoint: string;
  /** The secrets by id (ARN), as the stand-in holds them now. */
  secrets: Map<string, string>;
  /** Every call: its operation (`GetSecretValue`…) and secret id. */
  calls: { operation: string; secretId: string }[];
  /** Operations answered AccessDeniedException. */
  refuse: Set<string>;
  close(): Promise<void>;
}

function answer(
  stand: Pick<SecretsManagerStandIn, 'secrets' | 'refuse'>,
  operation: string,
  input: { SecretId?: string; SecretString?: string },
): { status: number; body: object } {
  const id = input.SecretId ?? '';
  if (stand.refuse.has(operation)) {
    return { status: 400, body: { __type: 'AccessDeniedException', message: `not allowed: ${operation}` } };
  }
  if (!stand.secrets.has(id)) {
    return { status: 400, body: { __type: 'ResourceNotFoundException', message: `no secret ${id}` } };
  }
  if (operation === 'GetSecretValue') {
    return { status: 200, body: { ARN: id, Name: id, SecretString: stand.secrets.get(id), VersionId: 'v' } };
  }
  if (operation === 'PutSecretValue' && typeof input.SecretString === 'string') {
    stand.secrets.set(id, input.SecretString);
    return { status: 200, body: { ARN: id, Name: id, VersionId: 'v2' } };
  }
  return { status: 400, body: { __type: 'InvalidRequestException', message: operation } };
}

/** Start a stand-in holding `secrets` (id → value). */
export async function startSecretsManager(
  secrets: Record<string, string> = {},
): Promise<SecretsManagerStandIn> {
  const stand = {
    secrets: new Map(Object.entries(secrets)),
    calls: [] as { operation: string; secretId: string }[],
    refuse: new Set<string>(),
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const operation = String(request.headers['x-amz-target'] ?? '').replace(/^secretsmanager\./, '');
      const input = JSON.parse(Buffer.concat(chunks).toString() || '{}');
      stand.calls.push({ operation, secretId: input.SecretId });
      const { status, body } = answer(stand, operation, input);
      response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify(body));
    });
  });
  const port = await listenOnLoopback(server);
  return { ...stand, endpoint: `http://127.0.0.1:${port}`, close: () => closeServer(server) };
}
