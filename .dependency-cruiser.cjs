/**
 * The layout's rules, kept by `npm run deps` (part of `npm test`): the arrows of docs/architecture.md.
 *
 *   builder/ ──▶ store/ ◀── proxy/        the contract (object format, object stores) both sides import
 *        └──────▶ aws/ ◀──────┘            AWS access: SDK clients, signed requests
 *   local/ and infra/ put the product together; client/ stands alone; nothing imports local/.
 *
 * test/ may import anything.
 */
const SIDES = '^(builder|proxy)/';

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
      name: 'store-is-the-contract',
      comment: 'store/ is what both sides import, so it imports neither (nor what assembles them).',
      severity: 'error',
      from: { path: '^store/' },
      to: { path: '^(builder|proxy|local|infra|client)/' },
    },
    {
      name: 'aws-is-a-leaf',
      comment: 'aws/ is plumbing: it knows AWS, not the product.',
      severity: 'error',
      from: { path: '^aws/' },
      to: { path: '^(builder|proxy|store|local|infra|client)/' },
    },
    {
      name: 'nothing-imports-local',
      comment: 'local/ assembles the product for npm start; the product never depends on it.',
      severity: 'error',
      from: { path: '^(builder|proxy|store|aws|infra|client)/' },
      to: { path: '^local/' },
    },
    {
      name: 'request-path-not-admin',
      comment: 'Operator tooling (proxy/admin/) is never on the request path.',
      severity: 'error',
      from: { path: '^proxy/', pathNot: '^proxy/admin/' },
      to: { path: '^proxy/admin/' },
    },
    {
      name: 'infra-deploys-not-imports',
      comment:
        'infra/ bundles proxy/lambda.ts by path; importing product code would pull it into the CDK app.',
      severity: 'error',
      from: { path: '^infra/' },
      to: { path: `${SIDES}|^(store|aws|local|client)/` },
    },
    {
      name: 'client-stands-alone',
      comment: 'client/ is what consumers install: it imports nothing of the rest of the repository.',
      severity: 'error',
      from: { path: '^client/' },
      to: { path: '^(builder|proxy|store|aws|local|infra|fixtures)/' },
    },
    {
      name: 'product-not-dev-dependencies',
      comment: 'What runs in production (the function, the builder CLI) must not need a devDependency.',
      severity: 'error',
      from: { path: '^(builder|proxy|store|aws)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(cdk\\.out|\\.local)/' },
  },
};
