import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    // Integration suites start their own s3rver/dynalite on ephemeral ports; two workers fit 2 cores.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
