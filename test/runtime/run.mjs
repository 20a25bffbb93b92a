// `npm test`'s last step: the proxy's suites — core, adapters, keys, quota, the lean clients, the proofs
// (faults included) — once more on the Node.js release the Lambda function runs on (runtime/node.mjs),
// when the rest of `npm test` ran on a newer major line (runtime/node.sh runs the tests on 24 or newer). On the
// function's own line the first run already was this run, so it is not repeated. CATALOGUE_SKIP_RUNTIME_TESTS=1
// skips it (say so when you do: the function's own runtime is then untested).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LAMBDA_NODE, nodeBinary } from '../../runtime/node.mjs';

/**
 * What the function runs: the core and its adapters, the wiring, the lean clients and the secret, keys and
 * metering (the concurrency test included), the proofs (faults with each client). Left to the first run:
 * what never runs in the function (the key CLI, the SDK object store's listings, the publish under load and
 * the racing publishers, which are the builder's) and what is pure computation (the request language, HTTP representation, logs).
 */
const SUITES = [
  'test/aws',
  'test/proxy/core',
  'test/proxy/adapters',
  'test/proxy/app.test.ts',
  'test/proxy/app.hot-path.test.ts',
  'test/proxy/config.test.ts',
  'test/proxy/cursor-secret.test.ts',
  'test/proxy/wiring.test.ts',
  'test/proxy/catalogue',
  'test/proxy/keys',
  'test/proxy/quota',
  'test/store/objects/s3-lean.test.ts',
  'test/proof',
];
const EXCLUDE = ['**/publish-under-load.test.ts', '**/publishers.test.ts'];

if (process.env.CATALOGUE_SKIP_RUNTIME_TESTS === '1') {
  process.stderr.write(
    `skipped: the proxy's suites on Node.js ${LAMBDA_NODE.version} (CATALOGUE_SKIP_RUNTIME_TESTS=1)\n`,
  );
  process.exit(0);
}
if (process.versions.node.split('.')[0] === String(LAMBDA_NODE.major)) {
  process.stderr.write(
    `the proxy's suites already ran on Node.js ${process.versions.node}, the Lambda runtime's line (${LAMBDA_NODE.major})\n`,
  );
  process.exit(0);
}
const node = nodeBinary(LAMBDA_NODE.version);
const root = fileURLToPath(new URL('../../', import.meta.url));
process.stderr.write(
  `the proxy's suites on Node.js ${LAMBDA_NODE.version} (the Lambda runtime): ${SUITES.join(' ')}\n`,
);
const args = [
  'node_modules/vitest/vitest.mjs',
  'run',
  ...SUITES,
  ...EXCLUDE.flatMap((glob) => ['--exclude', glob]),
];
const result = spawnSync(node, args, {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, CATALOGUE_LAMBDA_RUNTIME_RUN: '1' },
});
process.exit(result.status ?? 1);
