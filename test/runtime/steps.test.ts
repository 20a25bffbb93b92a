/**
 * `npm test`'s runner (test/runtime/steps.mjs): every step runs whatever another did — a failing check never
 * keeps test:runtime from running — and the end of its output says each step's outcome, with exit code 1 when
 * any failed. Run on a scratch project whose scripts pass or fail on purpose.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const STEPS = join(import.meta.dirname, 'steps.mjs');
const scratch: string[] = [];

afterAll(() => {
  for (const folder of scratch) rmSync(folder, { recursive: true, force: true });
});

/** `node steps.mjs` in a project whose scripts are `scripts`: its exit code and output. */
async function stepsOf(scripts: Record<string, string>) {
  const folder = mkdtempSync(join(tmpdir(), 'cat-steps-'));
  scratch.push(folder);
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'steps', private: true, scripts }));
  return run(process.execPath, [STEPS], { cwd: folder }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
}

const PASSING = {
  typecheck: 'exit 0',
  lint: 'exit 0',
  deps: 'exit 0',
  knip: 'exit 0',
  'test:unit': 'exit 0',
  'test:runtime': 'echo the function suites ran',
};

describe('npm test, every step', () => {
  it('runs the later steps after a failed one, says which failed at the end, and exits 1', async () => {
    const { code, stdout } = await stepsOf({ ...PASSING, lint: 'exit 3', 'test:unit': 'kill -TERM $$' });

    expect(code).toBe(1);
    expect(stdout).toContain('the function suites ran');
    const summary = stdout.slice(stdout.indexOf('npm test, every step:'));
    expect(summary).toMatch(/^ {2}typecheck +passed, \d+ s$/m);
    expect(summary).toMatch(/^ {2}lint +FAILED \(exit 3\), \d+ s$/m);
    expect(summary).toMatch(/^ {2}test:unit +FAILED \((exit 143|killed by SIGTERM)\), \d+ s$/m);
    expect(summary).toMatch(/^ {2}test:runtime +passed, \d+ s$/m);
    expect(summary.trimEnd().split('\n').at(-1)).toBe('2 of 6 steps failed: lint, test:unit');
  });

  it('exits 0 when every step passed, and says so last', async () => {
    const { code, stdout } = await stepsOf(PASSING);

    expect(code).toBe(0);
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('all 6 steps passed');
  });
});
