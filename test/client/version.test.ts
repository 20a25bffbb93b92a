/**
 * client/version.ts: the version comes from client/package.json, and every request says who sends it —
 * `User-Agent: catalogue-read-api-client/<version> node/<version>` (bun/deno on those runtimes) — except in a
 * browser, which sends its own (the client sets none there).
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CatalogueClient, VERSION } from '../../client/index.js';
import { runtimeOf, userAgentOf } from '../../client/version.js';
import { type ScriptedServer, startScripted } from './scripted.js';

const MANIFEST = JSON.parse(readFileSync(new URL('../../client/package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};
const TAGS = { status: 200, body: { data: [], page: { next_cursor: null } } };

describe('VERSION', () => {
  it("is client/package.json's version", () => {
    expect(VERSION).toBe(MANIFEST.version);
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('the User-Agent', () => {
  it.each([
    [{ process: { versions: { node: '24.11.1' } } }, 'node/24.11.1'],
    [{ process: { versions: { node: '22.3.0', bun: '1.2.3' } } }, 'bun/1.2.3'],
    [{ Deno: { version: { deno: '2.1.0' } }, process: { versions: { node: '22.0.0' } } }, 'deno/2.1.0'],
    [{}, undefined],
    [{ process: {} }, undefined],
  ])('runtimeOf(%j) → %j', (globals, expected) => {
    expect(runtimeOf(globals)).toBe(expected);
  });

  it('names the package, its version and the runtime; none where the runtime is a browser', () => {
    expect(userAgentOf({ process: { versions: { node: '24.11.1' } } })).toBe(
      `catalogue-read-api-client/${MANIFEST.version} node/24.11.1`,
    );
    expect(userAgentOf({})).toBeUndefined();
  });

  describe('as sent', () => {
    let api: ScriptedServer;
    beforeEach(async () => {
      api = await startScripted();
    });
    afterEach(async () => {
      await api.close();
    });

    it("is on every request, this Node.js's, and not Node's own 'node'", async () => {
      api.script(TAGS, TAGS);
      const client = new CatalogueClient({ baseUrl: api.baseUrl, apiKey: `pk_live_${'V'.repeat(22)}` });

      await client.tags.listPage();
      await client.standards.listPage();

      expect(api.requests.map((request) => request.headers['user-agent'])).toEqual([
        `catalogue-read-api-client/${VERSION} node/${process.versions.node}`,
        `catalogue-read-api-client/${VERSION} node/${process.versions.node}`,
      ]);
    });
  });
});
