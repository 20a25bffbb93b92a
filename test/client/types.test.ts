/**
 * The client's types: the record types are generated from proxy/openapi.json (a stale committed file fails
 * here), a detail has every top-level field, a list's records follow `fields` and `include`, and the names are
 * the client's camelCase. Checked by `npm run typecheck` (tsc over the tests); the same cases run against the
 * packed tarball in a consumer's project (test/client/package.test.ts).
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { GENERATED_FILE, generatedTypes } from '../../client/generate-types.js';
import type {
  CatalogueClient,
  Jack,
  Manufacturer,
  Module,
  ModuleField,
  ModuleFields,
  ModuleListItem,
  ModuleRelation,
  ModuleSummary,
  Page,
  Tag,
  TagRef,
} from '../../client/index.js';

describe('generated types', () => {
  it('client/openapi-types.ts is what the generator makes of proxy/openapi.json now', async () => {
    const committed = await readFile(GENERATED_FILE, 'utf8');
    const regenerated = await generatedTypes();
    // On failure: run `npx tsx client/generate-types.ts` and commit client/openapi-types.ts.
    expect(committed === regenerated, 'client/openapi-types.ts is stale').toBe(true);
  });

  it('gives the records and parameters the contract types', () => {
    expectTypeOf<Module['id']>().toEqualTypeOf<number>();
    expectTypeOf<ModuleRelation>().toEqualTypeOf<'ins' | 'outs' | 'tags' | 'panels'>();
    expectTypeOf<ModuleField>().toEqualTypeOf<keyof ModuleFields>();
    expectTypeOf<Tag['type']>().toMatchTypeOf<string | null>();
    expectTypeOf<CatalogueClient['tags']['listPage']>().returns.resolves.toEqualTypeOf<Page<Tag>>();
  });
});

/** Never called: what tsc says about these lines is the test. */
async function typeCases(client: CatalogueClient) {
  // A detail: every top-level field, required; no relation unless asked for.
  const module = await client.modules.get(101);
  expectTypeOf(module).toEqualTypeOf<Module>();
  expectTypeOf(module.name.length).toEqualTypeOf<number>();
  expectTypeOf(module.depth_mm).toEqualTypeOf<number | null>();
  // @ts-expect-error -- tags were not asked for
  module.tags;
  const withTags = await client.modules.get(101, { include: ['tags', 'ins'] });
  expectTypeOf(withTags).toEqualTypeOf<Module<'tags' | 'ins'>>();
  expectTypeOf(withTags.tags).toEqualTypeOf<TagRef[]>();
  expectTypeOf(withTags.ins).toEqualTypeOf<Jack[]>();
  // @ts-expect-error -- outs were not asked for
  withTags.outs;

  // A list narrowed by fields and include.
  const page = await client.modules.listPage({ fields: ['name'] });
  expectTypeOf(page.data[0]!).toEqualTypeOf<{ id: number; name: string }>();
  expectTypeOf(page.nextCursor).toEqualTypeOf<string | null>();
  const both = await client.modules.listPage({ fields: ['name', 'hp'], include: ['tags'] });
  expectTypeOf(both.data[0]!).toEqualTypeOf<ModuleListItem<'name' | 'hp', 'tags'>>();
  // @ts-expect-error -- manufacturer_id was not among the fields
  both.data[0]!.manufacturer_id;
  for await (const item of client.modules.list({ fields: [], manufacturerId: 1 })) {
    expectTypeOf(item).toEqualTypeOf<{ id: number }>();
  }
  // Without fields: every top-level field.
  for await (const item of client.modules.list({ sort: 'name' })) expectTypeOf(item).toEqualTypeOf<Module>();
  // A list whose members are not known when compiling: each field and relation maybe.
  const chosen: ModuleField[] = ['name'];
  for await (const item of client.modules.list({ fields: chosen })) {
    expectTypeOf(item.id).toEqualTypeOf<number>();
    expectTypeOf(item.name).toEqualTypeOf<string | undefined>();
  }
  // @ts-expect-error -- not a module field (relations come with include)
  await client.modules.listPage({ fields: ['ins'] });

  // Manufacturers: modules with include only, each with every top-level field.
  const maker = await client.manufacturers.get(1, { include: ['modules'] });
  expectTypeOf(maker.modules).toEqualTypeOf<ModuleSummary[]>();
  expectTypeOf(await client.manufacturers.get(1)).toEqualTypeOf<Manufacturer>();
}

describe('the calls', () => {
  it('are typed as precisely as the API answers (tsc checks typeCases)', () => {
    expect(typeCases).toBeTypeOf('function');
  });
});
