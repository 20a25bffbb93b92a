/**
 * `npm start` as a process of the tests: `node --import tsx local/start.ts` (what `npm start` runs) on an
 * ephemeral port and a data directory of the caller's, its output gathered. Used by test/helpers/npm-start.ts
 * (in the suites) and test/helpers/published-fixture.ts (the slow project's global set-up); free of vitest's
 * test APIs, so that both can import it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** `local/start.ts` on `local` with `env`, its stdout and stderr gathered as they come. */
export function spawnStart(
  local: string,
  env: Record<string, string>,
): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', CATALOGUE_LOCAL_DIR: local, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, output: gathered(child) };
}

/** A child's stdout and stderr gathered into one text as they come: what it has printed so far. */
export function gathered(child: ChildProcess): () => string {
  let out = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    out += chunk;
  });
  return () => out;
}
