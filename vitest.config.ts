import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The product's suites, the bench's own (bench/test/) and the local AWS layer's (its own package:
    // packages/local-aws/README.md).
    include: ['test/**/*.test.ts', 'bench/test/**/*.test.ts', 'packages/local-aws/test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    // Integration suites start their own s3rver/dynalite on ephemeral ports and wait on them, on child
    // processes and on Chromium: three workers keep 2 cores busier than two (the suite 380 → 343 s, idle).
    maxWorkers: 3,
    reporters: ['default'],
  },
});
