/** The client's record types are generated from proxy/openapi.json; a stale committed file fails here. */
import { readFile } from 'node:fs/promises';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { GENERATED_FILE, generatedTypes } from '../../client/generate-types.js';
import type { CatalogueClient, Module, ModuleField, ModuleRelation, Page, Tag } from '../../client/index.js';

describe('generated types', () => {
  it('client/openapi-types.ts is what the generator makes of proxy/openapi.json now', async () => {
    const committed = await readFile(GENERATED_FILE, 'utf8');
    const regenerated = await generatedTypes();
    // On failure: run `npx tsx client/generate-types.ts` and commit client/openapi-types.ts.
    expect(committed === regenerated, 'client/openapi-types.ts is stale').toBe(true);
  });

  it('gives the calls the contract types', () => {
    expectTypeOf<CatalogueClient['modules']['get']>().returns.resolves.toEqualTypeOf<Module>();
    expectTypeOf<CatalogueClient['tags']['listPage']>().returns.resolves.toEqualTypeOf<Page<Tag>>();
    expectTypeOf<Module['id']>().toEqualTypeOf<number>();
    expectTypeOf<ModuleRelation>().toEqualTypeOf<'ins' | 'outs' | 'tags' | 'panels'>();
    expectTypeOf<'name'>().toMatchTypeOf<ModuleField>();
    expectTypeOf<Tag['type']>().toMatchTypeOf<string | null>();
  });
});
