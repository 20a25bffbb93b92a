/**
 * The tables `npm run keys` acts on (admin/target.ts): the environment's when it names any of KEYS_TABLE,
 * COUNTERS_TABLE and DYNAMODB_ENDPOINT (then exactly as given), else the running npm start's; a refusal
 * (ConfigurationError, exit 2) saying both ways on when there is neither.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../admin/errors.js';
import { keysTarget } from '../../admin/target.js';
import { recordLocalStack } from '../../aws/local-stack.js';

const root = mkdtempSync(join(tmpdir(), 'cat-keys-target-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the tables of npm run keys', () => {
  it.each([
    { KEYS_TABLE: 'k' },
    { COUNTERS_TABLE: 'c' },
    { DYNAMODB_ENDPOINT: 'http://127.0.0.1:1' },
    { AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1' },
  ])('are the environment’s when it names any of them: %j', async (named) => {
    const env = { CATALOGUE_LOCAL_DIR: join(root, 'none'), ...named };
    expect(await keysTarget(env, root)).toEqual({ env });
  });

  it('with none named and no npm start running: refused, saying both ways on', async () => {
    const none = join(root, 'none');
    await expect(keysTarget({ CATALOGUE_LOCAL_DIR: none, KEYS_TABLE: '  ' }, root)).rejects.toThrow(
      new ConfigurationError(
        `no npm start is running on ${none} (none has recorded one there): start it (npm start) in another shell, or name the tables with KEYS_TABLE and COUNTERS_TABLE (the stack’s outputs; with DYNAMODB_ENDPOINT for tables not on AWS)`,
      ),
    );
  });

  it('with none named: the running npm start’s tables on its local DynamoDB, said', async () => {
    const dynamodb = createServer((socket) => socket.on('error', () => {}));
    await new Promise<void>((ready) => dynamodb.listen(0, '127.0.0.1', ready));
    const endpoint = `http://127.0.0.1:${(dynamodb.address() as { port: number }).port}`;
    const data = join(root, 'running');
    mkdirSync(data);
    try {
      recordLocalStack(data, {
        pid: process.pid,
        s3: 'http://127.0.0.1:9',
        bucket: 'catalogue',
        prefix: '',
        dynamodb: endpoint,
        keysTable: 'my-keys',
        countersTable: 'my-counters',
        api: 'http://127.0.0.1:8787/v1',
      });

      const target = await keysTarget({ CATALOGUE_LOCAL_DIR: data, AWS_REGION: 'eu-west-1' }, root);

      expect(target.env).toEqual({
        CATALOGUE_LOCAL_DIR: data,
        AWS_REGION: 'eu-west-1',
        KEYS_TABLE: 'my-keys',
        COUNTERS_TABLE: 'my-counters',
        DYNAMODB_ENDPOINT: endpoint,
      });
      expect(target.note).toBe(
        `no KEYS_TABLE, COUNTERS_TABLE or DYNAMODB_ENDPOINT: this checkout's npm start, tables my-keys and my-counters on its local DynamoDB at ${endpoint} (data directory ${data})`,
      );
    } finally {
      dynamodb.close();
    }
  });
});
