/**
 * One temporary directory per `vitest run`, removed when it ends: the global set-up (vitest.config.ts) points
 * TMPDIR at a new directory inside the machine's, before any worker starts, so that whatever the suites and the
 * processes they start leave in `os.tmpdir()` goes with it — CDK's cloud assemblies (`cdk.out*`, one per
 * synthesis with no outdir, up to 34 MB each: about 70 a run were left in /tmp), the catalogues and archives a
 * suite failed to remove, a killed process's files. tsx's cache of compiled files stays where it was, shared by
 * every run: its folder inside the run's is a link to the machine's. Both projects name it; the first to start
 * makes the directory, and its teardown (at the end of the run) removes it.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

const MADE = 'CATALOGUE_TEST_RUN_TMPDIR';

export default function setup(): () => void {
  if (process.env[MADE]) return () => {};
  const machine = tmpdir();
  const run = mkdtempSync(join(machine, 'catalogue-test-run-'));
  // tsx keeps its cache in <tmpdir>/tsx-<uid> (its own choice of folder, not an option).
  const tsxCache = `tsx-${userInfo().uid}`;
  mkdirSync(join(machine, tsxCache), { recursive: true });
  symlinkSync(join(machine, tsxCache), join(run, tsxCache), 'dir');
  const before = process.env.TMPDIR;
  process.env.TMPDIR = run;
  process.env[MADE] = run;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    delete process.env[MADE];
    rmSync(run, { recursive: true, force: true });
  };
}
