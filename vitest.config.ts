import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'bench/test/**/*.test.ts'],
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
