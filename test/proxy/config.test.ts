/** `loadConfig`: the byte cache's size (`BYTE_CACHE_MB`) and its default from the Lambda's memory. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../proxy/config.js';

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
    [{ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512' }, 128 * MB],
    [{ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1769' }, 442 * MB],
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
