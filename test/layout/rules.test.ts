/**
 * The layout's rules (.dependency-cruiser.cjs) really fire: a scratch tree with each forbidden arrow is
 * refused with the rule's name. `npm run deps` (in npm test) holds the repository itself to them.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');
const scratch = mkdtempSync(join(tmpdir(), 'cat-layout-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Run dependency-cruiser with the project's rules over `folders` of `cwd`: exit code and output. */
async function cruise(cwd: string, folders: string[]) {
  try {
    const { stdout } = await promisify(execFile)(DEPCRUISE, ['--config', CONFIG, ...folders], { cwd });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: `${failed.stdout}${failed.stderr}` };
  }
}

function tree(name: string, files: Record<string, string>): string {
  const root = join(scratch, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
  );
  writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module' }));
  return root;
}

describe('the layout rules', () => {
  it('lets infra/ import the tables schema, and only it, to declare the tables once', async () => {
    const root = tree('infra-schema', {
      'infra/a.ts': "import { b } from '../tables/schema.js';\nexport const a = b;\n",
      'tables/schema.ts': 'export const b = 1;\n',
    });
    const result = await cruise(root, ['infra', 'tables']);
    expect(result).toMatchObject({ code: 0 });
  });

  it("lets infra/ import the bucket's upload folders (pure names), and no other file of store/", async () => {
    const root = tree('infra-uploads', {
      'infra/a.ts': "import { b } from '../store/upload-prefixes.js';\nexport const a = b;\n",
      'infra/c.ts': "import { d } from '../store/layout.js';\nexport const c = d;\n",
      'store/upload-prefixes.ts': 'export const b = 1;\n',
      'store/layout.ts': 'export const d = 1;\n',
    });
    const result = await cruise(root, ['infra', 'store']);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('infra-deploys-not-imports: infra/c.ts → store/layout.ts');
    expect(result.output).not.toContain('infra/a.ts →');
  });

  it('lets a side import within itself (builder-and-admin-apart is about the other side)', async () => {
    const root = tree('admin-within', {
      'admin/a.ts': "import { b } from './http/b.js';\nexport const a = b;\n",
      'admin/http/b.ts': 'export const b = 1;\n',
    });
    expect(await cruise(root, ['admin'])).toMatchObject({ code: 0 });
  });

  it('lets both CLIs import the command kit (cli/)', async () => {
    const root = tree('cli-kit', {
      'builder/a.ts': "import { k } from '../cli/kit.js';\nexport const a = k;\n",
      'admin/b.ts': "import { k } from '../cli/kit.js';\nexport const b = k;\n",
      'cli/kit.ts': 'export const k = 1;\n',
    });
    expect(await cruise(root, ['builder', 'admin', 'cli'])).toMatchObject({ code: 0 });
  });

  it('lets the bench (bench/) import the product and the tests’ set-ups', async () => {
    const root = tree('bench-measures', {
      'bench/a.ts':
        "import { b } from '../proxy/b.js';\nimport { c } from '../test/helpers/c.js';\nexport const a = b + c;\n",
      'proxy/b.ts': 'export const b = 1;\n',
      'test/helpers/c.ts': 'export const c = 1;\n',
    });
    expect(await cruise(root, ['bench', 'proxy'])).toMatchObject({ code: 0 });
  });
});

/** Each rule with a scratch tree holding the one arrow it forbids (the importing file first). */
const REFUSALS = [
  [
    'builder-not-proxy',
    {
      'builder/a.ts': "import { b } from '../proxy/b.js';\nexport const a = b;\n",
      'proxy/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'proxy-not-builder',
    {
      'proxy/a.ts': "import { b } from '../builder/b.js';\nexport const a = b;\n",
      'builder/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'no-circular',
    {
      'store/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'store/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    },
  ],
  [
    'store-is-the-contract',
    {
      'store/a.ts': "import { b } from '../proxy/b.js';\nexport const a = b;\n",
      'proxy/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'proxy-not-admin',
    {
      'proxy/core/a.ts': "import { b } from '../../admin/b.js';\nexport const a = b;\n",
      'admin/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'admin-not-proxy',
    {
      'admin/a.ts': "import { b } from '../proxy/keys/b.js';\nexport const a = b;\n",
      'proxy/keys/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'builder-and-admin-apart',
    {
      'builder/a.ts': "import { b } from '../admin/b.js';\nexport const a = b;\n",
      'admin/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'tables-is-the-contract',
    {
      'tables/a.ts': "import { b } from '../admin/b.js';\nexport const a = b;\n",
      'admin/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'infra-deploys-not-imports',
    {
      'infra/a.ts': "import { b } from '../tables/keys.js';\nexport const a = b;\n",
      'tables/keys.ts': 'export const b = 1;\n',
    },
  ],
  [
    'cli-is-plumbing',
    {
      'cli/a.ts': "import { b } from '../builder/b.js';\nexport const a = b;\n",
      'builder/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'nothing-imports-local',
    {
      'proxy/a.ts': "import { b } from '../local/b.js';\nexport const a = b;\n",
      'local/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'nothing-imports-bench',
    {
      'proxy/a.ts': "import { b } from '../bench/b.js';\nexport const a = b;\n",
      'bench/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'local-aws-stands-alone',
    {
      'packages/local-aws/src/a.ts': "import { b } from '../../../store/b.js';\nexport const a = b;\n",
      'store/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'local-aws-by-its-name',
    {
      'local/a.ts': "import { b } from '../packages/local-aws/src/b.js';\nexport const a = b;\n",
      'packages/local-aws/src/b.ts': 'export const b = 1;\n',
    },
  ],
  [
    'product-not-local-aws',
    {
      'proxy/a.ts': "import { b } from '../packages/local-aws/src/b.js';\nexport const a = b;\n",
      'packages/local-aws/src/b.ts': 'export const b = 1;\n',
    },
  ],
] as const;

/** A file of `rule`'s tree, in the one tree of them all: its name made the rule's own. */
const ownPath = (rule: string, path: string) => path.replace(/[^/]+$/, (name) => `${rule}-${name}`);
/** Its text, every relative import pointing at the rule's own files. */
const ownText = (rule: string, text: string) =>
  text.replace(
    /(['"]\.\.?\/(?:[^'"]*\/)?)([^/'"]+\.js['"])/g,
    (_, dir: string, name: string) => `${dir}${rule}-${name}`,
  );

// One dependency-cruiser run over every rule's arrow at once (each file named after its rule), not one run per
// rule: the same refusals, a fifteenth of the processes.
describe('the layout rules, each arrow in one tree', () => {
  let result: { code: number; output: string };
  beforeAll(async () => {
    const files = Object.fromEntries(
      REFUSALS.flatMap(([rule, tree]) =>
        Object.entries(tree).map(([path, text]) => [ownPath(rule, path), ownText(rule, text)]),
      ),
    );
    const folders = [...new Set(Object.keys(files).map((path) => path.split('/')[0]!))];
    result = await cruise(tree('refusals', files), folders);
  }, 60_000);

  it.each(REFUSALS)('refuses %s', (rule, files) => {
    const from = ownPath(rule, Object.keys(files)[0]!);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain(`error ${rule}: ${from} →`);
  });
});
