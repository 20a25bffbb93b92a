/**
 * client/settings.ts: a client made without `baseUrl` or `apiKey` takes them from CATALOGUE_URL and
 * CATALOGUE_KEY; without them it fails at once, naming the option and the variable to set; warnings go to
 * `console` unless told otherwise.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CatalogueClient } from '../../client/index.js';
import { apiKeyOf, baseUrlOf, ENVIRONMENT, environmentVariable, loggerOf } from '../../client/settings.js';

const KEY = `pk_live_${'S'.repeat(22)}`;
const saved = { url: process.env.CATALOGUE_URL, key: process.env.CATALOGUE_KEY };

beforeEach(() => {
  delete process.env.CATALOGUE_URL;
  delete process.env.CATALOGUE_KEY;
});
afterEach(() => {
  for (const [name, value] of [
    ['CATALOGUE_URL', saved.url],
    ['CATALOGUE_KEY', saved.key],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('without the key', () => {
  it('says to pass apiKey or set CATALOGUE_KEY', () => {
    expect(ENVIRONMENT).toEqual({ baseUrl: 'CATALOGUE_URL', apiKey: 'CATALOGUE_KEY' });
    expect(() => new CatalogueClient({ baseUrl: 'http://127.0.0.1:8787/v1' })).toThrow(
      new TypeError(
        "No API key: pass { apiKey: 'pk_live_…' } to new CatalogueClient(), or set the CATALOGUE_KEY environment variable (npm start prints a key: export CATALOGUE_KEY=pk_live_…)",
      ),
    );
  });

  it('refuses an empty key (an unset variable read with ?? "") and names the variable', () => {
    expect(() => apiKeyOf('')).toThrow(/^apiKey is empty: .*CATALOGUE_KEY environment variable$/);
    expect(() => apiKeyOf('  ')).toThrow(TypeError);
  });
});

describe('from the environment', () => {
  it('reads CATALOGUE_URL and CATALOGUE_KEY, trimmed; the options win over them', () => {
    process.env.CATALOGUE_URL = 'http://127.0.0.1:8787/v1/';
    process.env.CATALOGUE_KEY = ` ${KEY}\n`;

    expect(baseUrlOf(undefined)).toBe('http://127.0.0.1:8787/v1');
    expect(apiKeyOf(undefined)).toBe(KEY);
    expect(baseUrlOf('https://api.example.org/v1')).toBe('https://api.example.org/v1');
    expect(apiKeyOf('pk_live_other')).toBe('pk_live_other');
    expect(() => new CatalogueClient()).not.toThrow();
  });

  it('treats an empty variable as unset', () => {
    process.env.CATALOGUE_KEY = '';

    expect(environmentVariable('CATALOGUE_KEY')).toBeUndefined();
  });

  it('without a base URL says to pass baseUrl or set CATALOGUE_URL; a bad one says which is wrong', () => {
    process.env.CATALOGUE_KEY = KEY;

    expect(() => new CatalogueClient()).toThrow(/^No base URL: .*set the CATALOGUE_URL environment variable/);
    expect(() => baseUrlOf('not a url')).toThrow(
      'baseUrl is not a URL (expected e.g. https://<your domain>/v1)',
    );
    process.env.CATALOGUE_URL = 'nope';
    expect(() => baseUrlOf(undefined)).toThrow('CATALOGUE_URL is not a URL');
  });

  it('where there is no process (a browser, a worker), as if unset', () => {
    const process = globalThis.process;
    Reflect.deleteProperty(globalThis, 'process');
    try {
      expect(environmentVariable('CATALOGUE_KEY')).toBeUndefined();
    } finally {
      globalThis.process = process;
    }
  });
});

describe('the logger', () => {
  it('is console by default, the given one, or nothing with false', () => {
    const warned: unknown[] = [];
    const original = console.warn;
    console.warn = (...args: unknown[]) => warned.push(args.join(' '));
    const mine: string[] = [];
    try {
      loggerOf(undefined).warn('to console');
      loggerOf(false).warn('to nowhere');
      loggerOf({ warn: (message) => mine.push(message) }).warn('to mine');
    } finally {
      console.warn = original;
    }

    expect(warned).toEqual(['to console']);
    expect(mine).toEqual(['to mine']);
  });
});
