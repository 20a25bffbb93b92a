/** aws/env.ts: where each service's endpoint is, loopback endpoints, and the environment's credentials. */
import { describe, expect, it } from 'vitest';
import { endpointSetting, environmentCredentials, integerSetting, isLoopback } from '../../aws/env.js';

describe('endpointSetting', () => {
  const all = {
    S3_ENDPOINT: 'http://127.0.0.1:1',
    AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:2',
    DYNAMODB_ENDPOINT: 'http://127.0.0.1:3',
    AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:4',
    AWS_ENDPOINT_URL_SECRETS_MANAGER: 'http://127.0.0.1:5',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:6',
  };

  it.each([
    ['s3', all, { name: 'S3_ENDPOINT', value: 'http://127.0.0.1:1' }],
    ['s3', { ...all, S3_ENDPOINT: undefined }, { name: 'AWS_ENDPOINT_URL_S3', value: 'http://127.0.0.1:2' }],
    [
      's3',
      { AWS_ENDPOINT_URL: 'http://127.0.0.1:6' },
      { name: 'AWS_ENDPOINT_URL', value: 'http://127.0.0.1:6' },
    ],
    ['dynamodb', all, { name: 'DYNAMODB_ENDPOINT', value: 'http://127.0.0.1:3' }],
    [
      'dynamodb',
      { ...all, DYNAMODB_ENDPOINT: ' ' },
      { name: 'AWS_ENDPOINT_URL_DYNAMODB', value: 'http://127.0.0.1:4' },
    ],
    ['secretsmanager', all, { name: 'AWS_ENDPOINT_URL_SECRETS_MANAGER', value: 'http://127.0.0.1:5' }],
    ['secretsmanager', {}, undefined],
    // As for the SDKs, this turns the standard variables off (the project's aliases stay).
    [
      's3',
      { ...all, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' },
      { name: 'S3_ENDPOINT', value: 'http://127.0.0.1:1' },
    ],
    ['secretsmanager', { ...all, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'TRUE' }, undefined],
  ] as const)('%s in %j → %j', (service, env, expected) => {
    expect(endpointSetting(service, env)).toEqual(expected);
  });
});

describe('isLoopback', () => {
  it.each([
    ['http://127.0.0.1:4568', true],
    ['http://127.1.2.3', true],
    ['http://localhost:4569', true],
    ['http://[::1]:8000', true],
    ['https://dynamodb.eu-west-1.amazonaws.com', false],
    ['http://10.0.0.1', false],
    ['not a url', false],
    [undefined, false],
  ])('%s → %s', (endpoint, loopback) => {
    expect(isLoopback(endpoint)).toBe(loopback);
  });
});

describe('environmentCredentials', () => {
  it('reads what Lambda sets, the session token included, and nothing when a part is missing', () => {
    expect(
      environmentCredentials({
        AWS_ACCESS_KEY_ID: 'AKID',
        AWS_SECRET_ACCESS_KEY: 's',
        AWS_SESSION_TOKEN: 't',
      }),
    ).toEqual({ accessKeyId: 'AKID', secretAccessKey: 's', sessionToken: 't' });
    expect(environmentCredentials({ AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 's' })).toEqual({
      accessKeyId: 'AKID',
      secretAccessKey: 's',
    });
    expect(environmentCredentials({ AWS_ACCESS_KEY_ID: 'AKID' })).toBeUndefined();
    expect(environmentCredentials({})).toBeUndefined();
  });
});

describe('integerSetting: the one rule of every integer setting', () => {
  const rule = { fallback: 5_000, min: 0, max: 3_600_000 };
  const problem = 'POINTER_TTL_MS must be an integer between 0 and 3600000';

  it.each([undefined, '', '  '])('is the fallback when unset or blank (%j)', (raw) => {
    expect(integerSetting({ POINTER_TTL_MS: raw }, 'POINTER_TTL_MS', rule)).toEqual({
      ok: true,
      value: 5_000,
    });
  });

  it.each([
    ['0', 0],
    ['250', 250],
    [' 250 ', 250],
    ['3600000', 3_600_000],
  ])('takes canonical digits within the bounds (%j)', (raw, value) => {
    expect(integerSetting({ POINTER_TTL_MS: raw }, 'POINTER_TTL_MS', rule)).toEqual({ ok: true, value });
  });

  it.each(['-1', '+5', '1.5', '1e3', '0x10', '010', '12ms', 'NaN', 'Infinity', '3600001', '9'.repeat(400)])(
    'refuses %j, naming the variable and its bounds',
    (raw) => {
      expect(integerSetting({ POINTER_TTL_MS: raw }, 'POINTER_TTL_MS', rule)).toEqual({ ok: false, problem });
    },
  );
});
