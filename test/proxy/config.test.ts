/**
 * `loadConfig`: the byte cache's size (`BYTE_CACHE_MB`) and its default from the Lambda's memory; endpoints
 * from the standard AWS variables; values no client could use as problems (503 configuration_error).
 */
import { describe, expect, it } from 'vitest';
import { createProxy } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import { flushLog } from '../../proxy/log/sink.js';

const REQUIRED = {
  CATALOGUE_BUCKET: 'b',
  KEYS_TABLE: 'k',
  COUNTERS_TABLE: 'c',
  CURSOR_SECRET: 'x'.repeat(32),
};
const MB = 2 ** 20;

describe('BYTE_CACHE_MB', () => {
  it.each([
    [{}, 64 * MB],
    [{ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512' }, 256 * MB],
    [{ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1769' }, 884 * MB],
    [{ BYTE_CACHE_MB: '32' }, 32 * MB],
    [{ BYTE_CACHE_MB: '0' }, 0],
    [{ BYTE_CACHE_MB: '16', AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512' }, 16 * MB],
  ])('%j → %i bytes', (env, bytes) => {
    const config = loadConfig({ ...REQUIRED, ...env });
    expect(config).toMatchObject({ ok: true, config: { byteCacheBytes: bytes } });
  });

  it.each(['-1', '1.5', 'lots', '65537'])('%j is refused, naming the variable', (value) => {
    const config = loadConfig({ ...REQUIRED, BYTE_CACHE_MB: value });
    expect(config).toEqual({ ok: false, problems: ['BYTE_CACHE_MB must be an integer between 0 and 65536'] });
  });
});

describe('endpoints: the standard AWS_ENDPOINT_URL variables, and the project’s own as aliases', () => {
  it.each([
    [{ AWS_ENDPOINT_URL: 'http://127.0.0.1:1' }, 'http://127.0.0.1:1', 'http://127.0.0.1:1'],
    [
      { AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:2', AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:3' },
      'http://127.0.0.1:2',
      'http://127.0.0.1:3',
    ],
    [
      {
        S3_ENDPOINT: 'http://127.0.0.1:4',
        AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:2',
        AWS_ENDPOINT_URL: 'http://x:9',
      },
      'http://127.0.0.1:4',
      'http://x:9',
    ],
    [{}, undefined, undefined],
  ])('%j → S3 %s, DynamoDB %s', (env, s3Endpoint, dynamodbEndpoint) => {
    expect(loadConfig({ ...REQUIRED, ...env })).toMatchObject({
      ok: true,
      config: { s3Endpoint, dynamodbEndpoint },
    });
  });

  it('reads Secrets Manager’s from AWS_ENDPOINT_URL_SECRETS_MANAGER when the secret is named by ARN', () => {
    const { CURSOR_SECRET: _, ...byArn } = REQUIRED;
    const config = loadConfig({
      ...byArn,
      CURSOR_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cursor-AbCdEf',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: 'http://127.0.0.1:7',
    });
    expect(config).toMatchObject({ ok: true, config: { secretsManagerEndpoint: 'http://127.0.0.1:7' } });
  });
});

describe('values no client could use are problems, answered 503 configuration_error, never a crash', () => {
  it.each([
    [{ CATALOGUE_BUCKET: 'Bad Bucket/Name' }, 'CATALOGUE_BUCKET is not a valid S3 bucket name'],
    [{ KEYS_TABLE: 'keys table' }, 'KEYS_TABLE is not a valid DynamoDB table name'],
    [{ COUNTERS_TABLE: 'c/d' }, 'COUNTERS_TABLE is not a valid DynamoDB table name'],
    [{ AWS_REGION: 'eu west 1' }, 'AWS_REGION is not a region name'],
    [{ AWS_ENDPOINT_URL_S3: 'not a url' }, 'AWS_ENDPOINT_URL_S3 is not a URL'],
    [{ DYNAMODB_ENDPOINT: 'ftp://127.0.0.1' }, 'DYNAMODB_ENDPOINT is not an http:// or https:// URL'],
  ])('%j', async (env, problem) => {
    const config = loadConfig({ ...REQUIRED, ...env });
    expect(config).toEqual({ ok: false, problems: [problem] });

    const logged: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => {
      logged.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    let answer: Awaited<ReturnType<ReturnType<typeof createProxy>>>;
    try {
      // No logger given: the problems go to the default one, stdout.
      const handle = createProxy(config);
      answer = await handle({
        method: 'GET',
        path: '/v1/tags',
        query: '',
        headers: { authorization: `Bearer pk_live_${'A'.repeat(22)}` },
      });
      flushLog();
    } finally {
      process.stdout.write = write;
    }
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body!.toString()).error.code).toBe('configuration_error');
    expect(logged.join('')).toContain(problem);

    // A logger given gets them instead, timed by the clock given.
    const lines: object[] = [];
    createProxy(config, { log: (line) => lines.push(line), now: () => new Date(0) });
    expect(lines).toEqual([
      {
        time: '1970-01-01T00:00:00.000Z',
        level: 'error',
        message: 'configuration incomplete',
        problems: [problem],
      },
    ]);
  });
});

describe('the default byte cache leaves a small function room to live', () => {
  it.each([
    ['128', 0],
    ['256', 32 * MB],
    ['384', 160 * MB],
    ['512', 256 * MB],
    ['1024', 512 * MB],
    ['10240', 5120 * MB],
  ])('AWS_LAMBDA_FUNCTION_MEMORY_SIZE=%s → %i bytes', (memory, bytes) => {
    expect(loadConfig({ ...REQUIRED, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: memory })).toMatchObject({
      ok: true,
      config: { byteCacheBytes: bytes },
    });
  });
});
