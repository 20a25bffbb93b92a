/**
 * `npm test`'s suites (`vitest run`), in two projects that run at once on the same workers, every suite in its
 * worker's module graph (isolate: false: a worker runs its suites one after another instead of importing the
 * graph again for each). The suites restore what they change (environment, stdout, timers), and one that loads
 * a module under the environment it sets loads it afresh (`vi.resetModules()`: the upload builder's handler in
 * test/builder/lambda*.test.ts).
 * - `quick`, `npm run test:quick`, the inner loop: the unit suites and the fastest integration suites (under a
 *   minute on the 2-core development machine with nothing else running; sharing the graph took the loop's import
 *   time from 57 to 15 s and its wall time from 87 to 50 s, measured side by side);
 * - `slow`: the suites that take seconds of CPU or more each, measured per file (test/README.md, "The quick
 *   loop"): `npm start` and its restarts, Chromium, the stock machine, CDK synthesis with bundling, the big property
 *   proofs and catalogues (sharing the graph: their import time 105–125 s → 67 s, npm test 600 s of CPU instead
 *   of 644–716 s in the runs before it, 2026-12-02). A new suite is in the quick loop until it joins {@link SLOW}.
 */
import { configDefaults, defineConfig } from 'vitest/config';

export const SLOW = [
  // npm start (started, restarted, killed), the reference pages in Chromium, a stock machine's npm.
  'test/local/start.test.ts',
  'test/local/start.loop.test.ts',
  'test/local/start.commands.test.ts',
  'test/local/uploads.test.ts',
  'test/local/admin.test.ts',
  'packages/local-aws/test/s3rver-conditional.test.ts',
  'test/local/start.disk.test.ts',
  'packages/local-aws/test/s3rver-store.test.ts',
  'test/ops/smoke.test.ts',
  'test/infra/scheduled-check.run.test.ts',
  'test/docs/publishing.test.ts',
  'test/docs/examples.test.ts',
  'test/docs/operating.test.ts',
  'test/docs/operating.cutover.test.ts',
  'test/docs/reference/**',
  'test/builder/upload-command.test.ts',
  'test/builder/launch.test.ts',
  'test/runtime/**',
  // The OpenAPI generators' clients against npm start; Biome over every file of the project.
  'test/proxy/openapi.generators.test.ts',
  'test/layout/stray.test.ts',
  'test/client/package.test.ts',
  'test/layout/rules.test.ts',
  // CDK synthesis with the functions bundled, cdk-nag, the resource specification.
  'test/infra/app.test.ts',
  'test/infra/bundling.test.ts',
  'test/infra/deploys.test.ts',
  'test/infra/nag.test.ts',
  'test/infra/props.test.ts',
  'test/infra/stack.test.ts',
  'test/infra/stack.resource-spec.test.ts',
  'test/infra/app.judged.test.ts',
  // Property proofs, big catalogues, publishes against real servers, racing and killed publishers.
  'test/proof/**',
  'test/admin/cli.test.ts',
  'test/admin/cli.key-stdin.test.ts',
  'test/admin/ledger.test.ts',
  'test/admin/import/file.test.ts',
  'test/builder/snapshot/load.test.ts',
  'test/builder/upload-failures.test.ts',
  'test/builder/lambda.timeout.test.ts',
  'test/proxy/adapters/http.latency.test.ts',
  'test/builder/lambda.test.ts',
  'test/builder/publish/incremental.test.ts',
  'test/builder/publish/publish.test.ts',
  'test/builder/publish/publish.interrupt.test.ts',
  'test/builder/publish/reuse.test.ts',
  'test/builder/render/full.test.ts',
  'test/builder/snapshot/validate.test.ts',
  'test/builder/upload/publish-upload.test.ts',
  'test/client/stack.test.ts',
  'packages/local-aws/test/threads.test.ts',
  'test/proxy/adapters/http.keep-alive.test.ts',
  'test/proxy/core/handler.test.ts',
  'test/proxy/quota/dynamo.test.ts',
  'test/proxy/quota/dynamo.faults.test.ts',
  'test/store/objects/s3.listing.test.ts',
];

/** The options every suite runs with. */
const SUITES: {
  include: string[];
  pool: 'forks';
  testTimeout: number;
  hookTimeout: number;
  teardownTimeout: number;
} = {
  // The product's suites, the bench's own (bench/test/) and the local AWS layer's (its own package:
  // packages/local-aws/README.md).
  include: ['test/**/*.test.ts', 'bench/test/**/*.test.ts', 'packages/local-aws/test/**/*.test.ts'],
  pool: 'forks',
  testTimeout: 30_000,
  hookTimeout: 60_000,
  teardownTimeout: 20_000,
};

export default defineConfig({
  test: {
    // Integration suites start their own s3rver/dynalite on ephemeral ports and wait on them, on child
    // processes and on Chromium: more workers than cores keep 2 cores busy (three: 380 → 343 s against two).
    // Three keep them busy through the whole run (CPU sampled each second); with every suite sharing its
    // worker's module graph, four did no better (358 s, 600 s of CPU; three: 352 s, 596 s, on a slower hour).
    maxWorkers: 3,
    reporters: ['default'],
    projects: [
      {
        test: {
          ...SUITES,
          name: 'quick',
          isolate: false,
          // One temporary directory for the run, removed at its end (test/helpers/run-tmpdir.ts).
          globalSetup: ['test/helpers/run-tmpdir.ts'],
          exclude: [...configDefaults.exclude, ...SLOW],
        },
      },
      {
        // The slow suites only: a folder's glob (`test/proof/**`) narrowed to its suites.
        test: {
          ...SUITES,
          name: 'slow',
          isolate: false,
          include: SLOW.map((glob) => glob.replace(/\/\*\*$/, '/**/*.test.ts')),
          // The run's temporary directory, then the folder of the fixture published by npm start at most once
          // per run, for the suites that serve it rather than watch its first publish: the first that asks
          // makes it (test/helpers/published-fixture.ts).
          globalSetup: ['test/helpers/run-tmpdir.ts', 'test/helpers/published-fixture.ts'],
        },
      },
    ],
  },
});
