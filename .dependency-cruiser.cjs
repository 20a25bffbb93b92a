/**
 * The layout's rules, kept by `npm run deps` (part of `npm test`): the arrows of docs/architecture.md.
 *
 *   builder/ ──▶ store/ ◀── proxy/ ──▶ tables/ ◀── admin/   the contracts: objects (store/), the keys and
 *        │                    │                      │        counters tables (tables/); no side imports another
 *        └──────▶ aws/ ◀──────┴──────────────────────┘        AWS access: SDK clients, signed requests
 *   cli/ is the command kit of the CLIs (builder/cli.ts, admin/cli.ts, ops/smoke.ts): plumbing, it imports no side.
 *   ops/ checks a deployment from outside (npm run smoke): as a consumer and an operator would, never through
 *   the request path's or key administration's code.
 *   local/ and infra/ put the product together (infra/ imports only the pure names of tables/schema.ts and
 *   store/upload-prefixes.ts, to declare each once); client/ stands alone; nothing imports local/.
 *   packages/local-aws/ (S3 and DynamoDB on loopback: npm start's and the tests') stands alone too, and is
 *   imported by its name, @catalogue/local-aws, by local/ and docs/ only (and the tests).
 *
 * test/ may import anything. bench/ (the benchmarks, a workspace of its own) may import anything too, and nothing
 * imports it.
 */
const SIDES = '^(builder|proxy|admin)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules that import each other in a loop cannot be read, tested or moved one at a time.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'builder-not-proxy',
      comment: 'The builder writes what store/ describes; it never reaches into the proxy.',
      severity: 'error',
      from: { path: '^builder/' },
      to: { path: '^proxy/' },
    },
    {
      name: 'proxy-not-builder',
      comment: 'The proxy reads what store/ describes; it never reaches into the builder.',
      severity: 'error',
      from: { path: '^proxy/' },
      to: { path: '^builder/' },
    },
    {
      name: 'proxy-not-admin',
      comment: 'Key administration (admin/) is never on the request path; what both need is in tables/.',
      severity: 'error',
      from: { path: '^proxy/' },
      to: { path: '^admin/' },
    },
    {
      name: 'admin-not-proxy',
      comment: 'Key administration writes what tables/ describes; it never reaches into the request path.',
      severity: 'error',
      from: { path: '^admin/' },
      to: { path: '^proxy/' },
    },
    {
      name: 'builder-and-admin-apart',
      comment: 'Publishing and key administration share nothing but plumbing.',
      severity: 'error',
      from: { path: '^(builder|admin)/' },
      to: { path: '^(builder|admin)/', pathNot: '^$1/' },
    },
    {
      name: 'store-is-the-contract',
      comment: 'store/ is what both sides import, so it imports neither (nor what assembles them).',
      severity: 'error',
      from: { path: '^store/' },
      to: { path: '^(builder|proxy|admin|tables|local|infra|client)/' },
    },
    {
      name: 'tables-is-the-contract',
      comment:
        'tables/ (the keys and counters tables) is what the request path and key administration both import: it imports no side, nothing that assembles them, and no AWS client.',
      severity: 'error',
      from: { path: '^tables/' },
      to: { path: '^(builder|proxy|admin|store|aws|local|infra|client)/' },
    },
    {
      name: 'aws-is-a-leaf',
      comment: 'aws/ is plumbing: it knows AWS, not the product.',
      severity: 'error',
      from: { path: '^aws/' },
      to: { path: '^(builder|proxy|admin|store|tables|local|infra|client)/' },
    },
    {
      name: 'cli-is-plumbing',
      comment:
        'cli/ (the command kit both CLIs share: usage errors, did you mean, option checks) knows command lines, not the product: it imports no side and nothing of the rest.',
      severity: 'error',
      from: { path: '^cli/' },
      to: { path: '^(builder|proxy|admin|store|tables|aws|local|infra|client)/' },
    },
    {
      name: 'ops-checks-from-outside',
      comment:
        'ops/ (npm run smoke) checks a deployment as its users meet it: over HTTP, the signed admin API and the published catalogue; it never imports the request path, key administration or what assembles them.',
      severity: 'error',
      from: { path: '^ops/' },
      to: { path: '^(proxy|admin|tables|local|infra|client)/' },
    },
    {
      name: 'nothing-imports-ops',
      comment: 'ops/ is a tool run by path; the product never depends on it.',
      severity: 'error',
      from: { path: '^(builder|proxy|admin|store|tables|aws|cli|local|infra|client)/' },
      to: { path: '^ops/' },
    },
    {
      name: 'nothing-imports-local',
      comment: 'local/ assembles the product for npm start; the product never depends on it.',
      severity: 'error',
      from: { path: '^(builder|proxy|admin|store|tables|aws|cli|ops|infra|client)/' },
      to: { path: '^local/' },
    },
    {
      name: 'nothing-imports-bench',
      comment:
        'bench/ (the benchmarks, a private workspace) measures the product from outside; neither the product nor its tests depend on it.',
      severity: 'error',
      from: { pathNot: '^bench/' },
      to: { path: '^bench/' },
    },
    {
      name: 'local-aws-stands-alone',
      comment:
        'packages/local-aws (S3 and DynamoDB on loopback) knows AWS, not the product: it imports nothing of the repository outside itself; npm start passes it what the product asks of it (local/own-servers.ts).',
      severity: 'error',
      from: { path: '^packages/local-aws/' },
      to: {
        path: '^(admin|aws|builder|cli|client|docs|fixtures|infra|local|ops|proxy|store|tables|test|bench)/',
      },
    },
    {
      name: 'local-aws-by-its-name',
      comment:
        'The local AWS layer is a package: the rest of the repository imports it by its name (@catalogue/local-aws), never by a path into it.',
      severity: 'error',
      from: { pathNot: '^packages/local-aws/' },
      // By name: 'aliased-workspace' from the root's manifest; 'undetermined' is how dependency-cruiser calls the same
      // import from bench/, a workspace with a manifest of its own. A path into it is 'local' either way.
      to: { path: '^packages/local-aws/', dependencyTypesNot: ['aliased-workspace', 'undetermined'] },
    },
    {
      name: 'product-not-local-aws',
      comment:
        "What runs in production never needs the local emulation of AWS: only npm start (local/) and the reference pages' recorded exchanges (docs/) use it, besides the tests.",
      severity: 'error',
      from: { path: '^(builder|proxy|admin|store|tables|aws|cli|ops|infra|client)/' },
      to: { path: '^packages/local-aws/' },
    },
    {
      name: 'infra-deploys-not-imports',
      comment:
        "infra/ bundles proxy/lambda-entry.ts and admin/lambda.ts by path; importing product code would pull it into the CDK app. The exceptions are pure names, so each is declared once: the tables schema and the bucket's upload folders.",
      severity: 'error',
      from: { path: '^infra/' },
      to: {
        path: `${SIDES}|^(store|aws|cli|local|client)/|^tables/`,
        pathNot: '^(tables/schema|store/upload-prefixes)\\.ts$',
      },
    },
    {
      name: 'client-stands-alone',
      comment: 'client/ is what consumers install: it imports nothing of the rest of the repository.',
      severity: 'error',
      from: { path: '^client/' },
      to: { path: '^(builder|proxy|admin|store|tables|aws|cli|local|infra|fixtures)/' },
    },
    {
      name: 'product-not-dev-dependencies',
      comment:
        'What runs in production (the functions, the builder and key CLIs) must not need a devDependency.',
      severity: 'error',
      from: { path: '^(builder|proxy|admin|store|tables|aws|cli|ops)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    // The workspace package resolved through its package.json exports (TypeScript sources), as Node and tsx do.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(cdk\\.out|\\.local)/' },
  },
};
