/**
 * One mechanism per job (issue 39): each job below is done in one place. The rules a linter can say are Biome
 * GritQL plugins (lint/<rule>.grit, named in biome.json "plugins" with the files each applies to: the product, or
 * everything, but the files that do the job), so `npm run lint` (in npm test) and the editor report every place
 * that does the job again; comments never count. This suite proves that each plugin fires: Biome, with the
 * repository's own plugin settings, over lines that break the rule at a path the rule covers (each reported) and
 * at a path it allows (none reported), so a rule that could not fire, or that Biome stopped loading, fails here.
 *
 *   a thrown value's message     errorMessage / errorWithCause (store/errors.ts), never `(x as Error).message`
 *   an integer setting           integerSetting (aws/env.ts), never Number(env.X)
 *   the free tier's rule         FREE_TIER_FIXED (admin/output.ts)
 *   the upload folders           UPLOAD_PREFIXES (store/upload-prefixes.ts)
 *   the admin side's clock       the context's `now` (AdminContext), read where a clock is made
 *   did you mean                 cli/suggest.ts
 *   a request id                 newRequestId (store/request-id.ts)
 *   the keys CLI's defaults      the settings' constants, never typed into its help
 *
 * The last stays a test here: it compares the help to the settings' values and reads which of the CLI's strings
 * make up the help, neither of which a linter's pattern can know.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../admin/cli.js';
import {
  DEFAULT_DEADLINE_MS,
  DEFAULT_MAX_KEYS_PER_OWNER,
  PARTNER_DEFAULT_LIMITS,
} from '../../admin/settings.js';
import { BOUNDS, ROLL_GRACE_DEFAULT_HOURS } from '../../admin/validate.js';
import { DEFAULT_REGION } from '../../aws/env.js';
import { KEY_CACHE_DEFAULTS } from '../../tables/keys.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BIOME = join(ROOT, 'node_modules/@biomejs/biome/bin/biome');

interface PluginEntry {
  path: string;
  includes?: string[];
}
const PLUGINS = (JSON.parse(readFileSync(join(ROOT, 'biome.json'), 'utf8')) as { plugins: PluginEntry[] })
  .plugins;

/** Each rule: its plugin, lines that break it, a path it covers, and the path it allows (when one is). */
interface Rule {
  plugin: string;
  broken: string;
  /** How many places of `broken` it reports. */
  places: number;
  at: string;
  allowed?: string;
}

const RULES: Rule[] = [
  {
    plugin: 'error-message',
    broken:
      'try { f(); } catch (error) { log((error as Error).message); }\n' +
      'const why = (thrown as Error).cause;\n// (error as Error).message in a comment\n',
    places: 2,
    at: 'test/anywhere.test.ts',
  },
  {
    plugin: 'integer-setting',
    broken: 'const port = Number(env.PORT ?? 8787);\nconst digits = /^[0-9]+$/.test(env.TTL);\n',
    places: 2,
    at: 'proxy/elsewhere.ts',
    allowed: 'aws/env.ts',
  },
  {
    plugin: 'free-tier-rule',
    broken: "throw new Error('free-tier limits are fixed (60/minute, 5000/month)');\n",
    places: 1,
    at: 'admin/elsewhere.ts',
    allowed: 'admin/output.ts',
  },
  {
    plugin: 'upload-folders',
    broken: `const key = 'incoming/' + name + '.tar.gz';\nconst report = \`\${root}reports/\${name}.json\`;\n`,
    places: 2,
    at: 'builder/elsewhere.ts',
    allowed: 'store/upload-prefixes.ts',
  },
  {
    plugin: 'admin-clock',
    broken: 'const line = { time: new Date().toISOString(), ms: Date.now(), epoch: new Date(0) };\n',
    places: 2,
    at: 'admin/elsewhere.ts',
    allowed: 'admin/lambda.ts',
  },
  {
    plugin: 'did-you-mean',
    broken:
      "import { closestMatch } from 'leven';\nconst hint = '; did you mean ' + closestMatch(a, b) + '?';\n",
    places: 2,
    at: 'cli/elsewhere.ts',
    allowed: 'cli/suggest.ts',
  },
  {
    plugin: 'request-id',
    broken: "const requestId = 'req_' + randomBytes(12).toString('base64url');\n",
    places: 1,
    at: 'admin/elsewhere.ts',
    allowed: 'store/request-id.ts',
  },
];

interface Diagnostic {
  category: string;
  message: string;
  location: { path: string; start: { line: number } };
}

const scratch = mkdtempSync(join(tmpdir(), 'cat-mechanisms-'));
/** What Biome reported of the plugins, by rule: the paths of its diagnostics (one per place). */
const reported = new Map<string, string[]>();

/**
 * Each rule's broken lines at its paths in a scratch tree of its own, linted by Biome with the repository's
 * entry for the rule's plugin (its path made absolute, its `includes` as they are); the trees linted at once.
 */
beforeAll(async () => {
  const diagnostics = await Promise.all(
    RULES.map(async (rule) => {
      const tree = join(scratch, rule.plugin);
      const entry = PLUGINS.find((plugin) => plugin.path === `./lint/${rule.plugin}.grit`);
      if (!entry) return [];
      mkdirSync(tree, { recursive: true });
      const config = { root: true, plugins: [{ ...entry, path: join(ROOT, entry.path) }] };
      writeFileSync(join(tree, 'biome.json'), JSON.stringify(config));
      const paths = [rule.at, ...(rule.allowed ? [rule.allowed] : [])];
      for (const path of paths) {
        mkdirSync(dirname(join(tree, path)), { recursive: true });
        writeFileSync(join(tree, path), rule.broken);
      }
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [BIOME, 'lint', '--reporter=json', '--max-diagnostics=none', ...paths],
        { cwd: tree },
      ).catch((failed: { stdout: string }) => failed);
      return (JSON.parse(stdout) as { diagnostics: Diagnostic[] }).diagnostics.filter(
        (diagnostic) => diagnostic.category === 'plugin',
      );
    }),
  );
  RULES.forEach((rule, i) => {
    reported.set(
      rule.plugin,
      diagnostics[i]!.map((diagnostic) => `${diagnostic.location.path}: ${diagnostic.message}`),
    );
  });
}, 60_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('one mechanism per job: the Biome plugins', () => {
  it('biome.json names every plugin of lint/, and every plugin it names is there', () => {
    const inFolder = readdirSync(join(ROOT, 'lint')).filter((name) => name.endsWith('.grit'));
    expect(PLUGINS.map((plugin) => plugin.path).sort()).toEqual(
      inFolder.map((name) => `./lint/${name}`).sort(),
    );
    expect(RULES.map((rule) => `./lint/${rule.plugin}.grit`).sort()).toEqual(
      inFolder.map((name) => `./lint/${name}`).sort(),
    );
  });

  it.each(RULES)('$plugin fires at $at, each place, and not at $allowed', (rule) => {
    const found = reported.get(rule.plugin) ?? [];
    expect(found.filter((line) => line.startsWith(`${rule.at}: `))).toHaveLength(rule.places);
    expect(found.every((line) => line.startsWith(`${rule.at}: `))).toBe(true);
  });
});

/** The texts of the keys CLI's help as typed in admin/cli.ts: HELP_HEAD, HELP_TAIL and each command's `help`. */
function helpTexts(source: string): string[] {
  const file = ts.createSourceFile('admin/cli.ts', source, ts.ScriptTarget.Latest, true);
  const texts: string[] = [];
  const literalTexts = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) texts.push(node.text);
    else if (ts.isTemplateExpression(node))
      texts.push(node.head.text, ...node.templateSpans.map((span) => span.literal.text));
  };
  const visit = (node: ts.Node) => {
    const named = ts.isVariableDeclaration(node) && ['HELP_HEAD', 'HELP_TAIL'].includes(node.name.getText());
    const property = ts.isPropertyAssignment(node) && node.name.getText() === 'help';
    if ((named && node.initializer) || property) literalTexts(node.initializer!);
    node.forEachChild(visit);
  };
  visit(file);
  return texts;
}

/**
 * What the help may type as digits: none of them a default. A status and its code, the WHEN examples, an
 * endpoint for example, a field's name. Anything else with a digit (a default typed in) fails.
 */
const TYPED_NUMBERS = [
  /401 invalid_key/g,
  /2026-12-31(T18:00:00Z|T19:00\+01:00)?/g,
  /\((90d), (12h), (30m)\)/g,
  /http:\/\/127\.0\.0\.1:8000/g,
  /key_sha256/g,
];

/** The digits in `texts` that are not one of the numbers the help may type. */
function typedDefaults(texts: readonly string[]): string[] {
  return texts.flatMap((text) => {
    const rest = TYPED_NUMBERS.reduce((left, allowed) => left.replace(allowed, ''), text);
    return rest.match(/\S*\d\S*/g) ?? [];
  });
}

describe("the keys CLI's defaults", () => {
  const source = readFileSync(join(ROOT, 'admin/cli.ts'), 'utf8');

  it('are never typed into its help: no number in the help as written but an example', () => {
    const texts = helpTexts(source);
    // The help is read: its head, its tail and every command's lines.
    expect(texts.join('')).toContain('Usage: npm run keys');
    expect(texts.join('')).toContain('create-tables');
    expect(typedDefaults(texts)).toEqual([]);
  });

  it('fires on a default typed into the help, wherever and whatever it is', () => {
    const typed = [
      [`(\${DEFAULT_MAX_KEYS_PER_OWNER})`, '(10)'],
      [`(\${DEFAULT_DEADLINE_MS})`, '(8000)'],
      [`default \${DEFAULT_REGION}`, 'default us-east-1'],
      // A default that does not exist yet: a new setting's, typed in.
      ['Never keys.', 'Never keys. At most 250 per page (LIST_PAGE_SIZE).'],
    ];
    for (const [written, typedIn] of typed) {
      expect(source).toContain(written!);
      const changed = helpTexts(source.replace(written!, typedIn!));
      expect(typedDefaults(changed), typedIn).not.toEqual([]);
    }
  });

  it("shows the settings' own values", async () => {
    let out = '';
    const code = await main(['--help'], {}, { out: (text) => (out += text), err: () => {} });
    expect(code).toBe(0);
    for (const shown of [
      `defaults ${PARTNER_DEFAULT_LIMITS.minute} and ${PARTNER_DEFAULT_LIMITS.month}`,
      `(${DEFAULT_MAX_KEYS_PER_OWNER})`,
      `(${DEFAULT_DEADLINE_MS})`,
      `(${KEY_CACHE_DEFAULTS.ttlMs}, ${KEY_CACHE_DEFAULTS.negativeTtlMs})`,
      `default ${KEY_CACHE_DEFAULTS.ttlMs / 1000} s`,
      `default ${DEFAULT_REGION}`,
      `default ${ROLL_GRACE_DEFAULT_HOURS}h, at most ${BOUNDS.rollGraceDays}d`,
    ]) {
      expect(out).toContain(shown);
    }
  });
});
