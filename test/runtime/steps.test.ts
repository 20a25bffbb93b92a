/**
 * `npm test`'s runner (test/runtime/steps.mjs): every step runs whatever another did — a failing check never
 * keeps the tests from running — and the end of its output says each step's outcome, with exit code 1 when
 * any failed; on a Node.js of another line than the functions' it runs none and says so in one line. Run on a
 * scratch project whose scripts pass or fail on purpose.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { LAMBDA_NODE } from '../helpers/node-release.js';
import { olderNode } from '../helpers/stock-machine.js';

const run = promisify(execFile);
const STEPS = join(import.meta.dirname, 'steps.mjs');
const scratch: string[] = [];

afterAll(() => {
  for (const folder of scratch) rmSync(folder, { recursive: true, force: true });
});

/** `node steps.mjs` in a project whose scripts are `scripts`: its exit code and output. */
async function stepsOf(scripts: Record<string, string>, node = process.execPath) {
  const folder = mkdtempSync(join(tmpdir(), 'cat-steps-'));
  scratch.push(folder);
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'steps', private: true, scripts }));
  return run(node, [STEPS], { cwd: folder }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

const PASSING = {
  typecheck: 'exit 0',
  lint: 'exit 0',
  deps: 'exit 0',
  knip: 'echo the last step ran',
  'test:unit': 'exit 0',
};

describe('npm test, every step', () => {
  it('runs every step whatever another did, says which failed at the end, and exits 1', async () => {
    const { code, stdout } = await stepsOf({ ...PASSING, lint: 'exit 3', 'test:unit': 'kill -TERM $$' });

    expect(code).toBe(1);
    expect(stdout).toContain('the last step ran');
    const summary = stdout.slice(stdout.indexOf('npm test, every step:'));
    expect(summary).toMatch(/^ {2}typecheck +passed, \d+ s$/m);
    expect(summary).toMatch(/^ {2}lint +FAILED \(exit 3\), \d+ s$/m);
    expect(summary).toMatch(/^ {2}test:unit +FAILED \((exit 143|killed by SIGTERM)\), \d+ s$/m);
    expect(summary).toMatch(/^ {2}knip +passed, \d+ s$/m);
    expect(summary.trimEnd().split('\n').at(-1)).toBe('2 of 5 steps failed: lint, test:unit');
  });

  it('exits 0 when every step passed, and says so last', async () => {
    const { code, stdout } = await stepsOf(PASSING);

    expect(code).toBe(0);
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('all 5 steps passed');
  });

  it('on a Node.js of another line than the functions’ runs no step and says so in one line', async () => {
    const older = olderNode();
    const { code, stdout, stderr } = await stepsOf(PASSING, older);

    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(
      new RegExp(
        `^npm test runs on the Lambda functions' Node\\.js ${LAMBDA_NODE.major} and this is Node\\.js v\\d+\\.[^\\n]+\\n$`,
      ),
    );
  }, 300_000);
});
