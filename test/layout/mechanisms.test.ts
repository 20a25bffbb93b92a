/**
 * One mechanism per job (issue 39): each job below is done in one place, and this suite keeps it so. Every
 * rule reads the product's sources with TypeScript's parser (string literals and template text, calls,
 * `new` expressions; comments never count) and names each place that does the job again; each rule is also
 * run over a few lines that break it, so a rule that could not fire would fail here.
 *
 *   a thrown value's message     errorMessage / errorWithCause (store/errors.ts), never `(x as Error).message`
 *   an integer setting           integerSetting (aws/env.ts), never Number(env.X)
 *   the free tier's rule         FREE_TIER_FIXED (admin/output.ts)
 *   the upload folders           UPLOAD_PREFIXES (store/upload-prefixes.ts)
 *   the keys CLI's defaults      the settings' constants, never typed into its help
 *   the admin side's clock       the context's `now` (AdminContext), read where a clock is made
 *   did you mean                 cli/suggest.ts
 *   a request id                 newRequestId (store/request-id.ts)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
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
/** The product: every folder but the manual, the fixtures and the tests. */
const PRODUCT = [
  'admin',
  'aws',
  'builder',
  'cli',
  'client',
  'infra',
  'local',
  'ops',
  'proxy',
  'store',
  'tables',
];
const SOURCE = /\.(ts|mts|js|mjs|cjs)$/;
/** Dependencies, build output and generated types: not written here. */
const SKIPPED = new Set(['node_modules', 'cdk.out', 'dist', '.local', 'openapi-types.ts']);

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).flatMap((name) => {
    if (SKIPPED.has(name)) return [];
    const path = join(folder, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sourcesUnder(path);
    return SOURCE.test(name) ? [path] : [];
  });
}

type Sources = Record<string, string>;
const product: Sources = Object.fromEntries(
  PRODUCT.flatMap(sourcesUnder).map((path) => [path, readFileSync(join(ROOT, path), 'utf8')]),
);
const everything: Sources = {
  ...product,
  ...Object.fromEntries(
    ['test', 'docs'].flatMap(sourcesUnder).map((path) => [path, readFileSync(join(ROOT, path), 'utf8')]),
  ),
};

const parsed = new Map<string, ts.Node[]>();

/** Every node of a file, depth first (each file parsed once for all the rules). */
function nodesOf(path: string, text: string): ts.Node[] {
  const key = `${path}\n${text}`;
  const known = parsed.get(key);
  if (known) return known;
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const nodes: ts.Node[] = [];
  const visit = (node: ts.Node) => {
    nodes.push(node);
    node.forEachChild(visit);
  };
  visit(file);
  parsed.set(key, nodes);
  return nodes;
}

/** `path:line` of each node `matches`, in every file but `allowed` (only files `mentions` finds are parsed). */
function places(sources: Sources, rule: Pick<Rule, 'matches' | 'allowed' | 'mentions'>): string[] {
  const { matches, allowed = [], mentions } = rule;
  return Object.entries(sources)
    .filter(([path, text]) => !allowed.includes(path) && mentions.test(text))
    .flatMap(([path, text]) =>
      nodesOf(path, text)
        .filter(matches)
        .map((node) => {
          const line = node.getSourceFile().getLineAndCharacterOfPosition(node.getStart()).line + 1;
          return `${path}:${line}`;
        }),
    );
}

/** A string literal's or a template's text (not its substitutions) that `pattern` finds. */
const textMatching =
  (pattern: RegExp) =>
  (node: ts.Node): boolean =>
    (ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)) &&
    pattern.test(node.text);

/** Each rule: what it finds, where it may be (with why), and lines that break it. */
interface Rule {
  job: string;
  /** What a file must contain for the rule to look at it (parsing every file for every rule is slow). */
  mentions: RegExp;
  sources: Sources;
  matches: (node: ts.Node) => boolean;
  allowed?: string[];
  broken: string;
}

const isWallClock = (node: ts.Node): boolean =>
  (ts.isNewExpression(node) && node.expression.getText() === 'Date' && (node.arguments?.length ?? 0) === 0) ||
  (ts.isCallExpression(node) && node.expression.getText() === 'Date.now');

const RULES: Rule[] = [
  {
    job: "a thrown value's message: errorMessage or errorWithCause (store/errors.ts), never a cast",
    mentions: /as Error/,
    sources: everything,
    matches: (node) =>
      ts.isAsExpression(node) &&
      node.type.getText() === 'Error' &&
      ts.isParenthesizedExpression(node.parent) &&
      ts.isPropertyAccessExpression(node.parent.parent) &&
      ['message', 'cause'].includes(node.parent.parent.name.text),
    broken: 'try { f(); } catch (error) { log((error as Error).message); }',
  },
  {
    job: 'an integer from the environment: integerSetting (aws/env.ts), one rule and one message',
    mentions: /\benv\b/,
    sources: product,
    matches: (node) =>
      (ts.isCallExpression(node) &&
        ['Number', 'parseInt', 'parseFloat', 'Number.parseInt'].includes(node.expression.getText()) &&
        node.arguments.some((argument) => /\benv\b/.test(argument.getText()))) ||
      // An integer rule of its own in a file that reads the environment (as proxy/config.ts and
      // admin/settings.ts each had, with different rules).
      (ts.isRegularExpressionLiteral(node) &&
        /^\/\^(\[0-9\]\+|\\d\+|\(0\|\[1-9\]\[0-9\]\*\))\$\/$/.test(node.text)),
    allowed: ['aws/env.ts'],
    broken: 'const port = Number(env.PORT ?? 8787);\nconst digits = /^[0-9]+$/.test(env.TTL);',
  },
  {
    job: "the free tier's rule: FREE_TIER_FIXED (admin/output.ts)",
    mentions: /limits are fixed/,
    sources: product,
    matches: textMatching(/limits are fixed/),
    allowed: ['admin/output.ts'],
    broken: "throw new Error('free-tier limits are fixed (60/minute, 5000/month)');",
  },
  {
    job: 'the upload folders: UPLOAD_PREFIXES (store/upload-prefixes.ts)',
    mentions: /(incoming|reports)\//,
    sources: product,
    matches: textMatching(/\b(incoming|reports)\//),
    allowed: ['store/upload-prefixes.ts'],
    broken: "const key = 'incoming/' + name + '.tar.gz';",
  },
  {
    job: "the admin side's time: the context's clock, read only where a clock is made",
    mentions: /Date/,
    sources: Object.fromEntries(Object.entries(product).filter(([path]) => path.startsWith('admin/'))),
    matches: isWallClock,
    // The function's clock, the CLI's `now` (tests give their own), register's default (npm start's dev keys).
    allowed: ['admin/lambda.ts', 'admin/cli.ts', 'admin/actions.ts'],
    broken: 'const line = { time: new Date().toISOString() };',
  },
  {
    job: 'did you mean: cli/suggest.ts, for the CLIs, the snapshot checks and the API',
    mentions: /did you mean|leven/i,
    sources: product,
    matches: (node) =>
      textMatching(/did you mean/i)(node) ||
      (ts.isImportDeclaration(node) && /^['"]leven['"]$/.test(node.moduleSpecifier.getText())),
    // infra/ is the CDK app, which imports no product code (.dependency-cruiser.cjs): its two settings
    // messages use `leven` directly.
    allowed: ['cli/suggest.ts', 'infra/context.ts', 'infra/props.ts'],
    broken:
      "import { closestMatch } from 'leven';\nconst hint = '; did you mean ' + closestMatch(a, b) + '?';",
  },
  {
    job: 'a request id: newRequestId (store/request-id.ts), for both APIs',
    mentions: /req_/,
    sources: product,
    matches: textMatching(/^req_/),
    // The edge, which runs none of our code: its CloudFront Function (which cannot import) gives its 401s
    // CloudFront's own id, found in its logs; the WAF's 429 is a fixed body (infra/edge.ts).
    allowed: ['store/request-id.ts', 'infra/viewer-request.js', 'infra/edge.ts'],
    broken: "const requestId = 'req_' + randomBytes(12).toString('base64url');",
  },
];

describe('one mechanism per job', () => {
  it.each(RULES)('$job', (rule) => {
    expect(places(rule.sources, rule)).toEqual([]);
    // The rule fires: the same check over lines that do the job again.
    expect(places({ 'elsewhere.ts': rule.broken }, { ...rule, allowed: [] })).not.toEqual([]);
  });

  it("keeps the keys CLI's help free of typed defaults: it shows the settings' own", async () => {
    const help = readFileSync(join(ROOT, 'admin/cli.ts'), 'utf8');
    const typed = places(
      { 'admin/cli.ts': help },
      {
        mentions: /./,
        matches: textMatching(/\((600|10|8000|30000)\b|\b1000000\b|default (us-east-1|30 s|24h)|at most 30d/),
      },
    );
    expect(typed).toEqual([]);
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
