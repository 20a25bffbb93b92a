// `npm test`: every step runs, whatever another one did, and each one's outcome is said at the end. The checks
// and the first vitest run at once (typecheck, lint, deps, knip, test:unit, as `run-p` ran them), then the
// function's suites on the Lambda runtime's Node.js line (test:runtime, which needs the CPU to itself). A failing
// step never keeps a later one from running; the exit code is 1 when any step failed, 0 when all passed.
// Plain JavaScript, run by Node.js itself after runtime/node.sh chose it (no tsx: nothing to compile first).
import { spawn } from 'node:child_process';

/** The steps, as groups that run one after the other; the steps of a group run at once. */
const GROUPS = [['typecheck', 'lint', 'deps', 'knip', 'test:unit'], ['test:runtime']];

const running = new Set();

/** `npm run <script>`, its output as it comes; its outcome and how long it took. */
function step(script) {
  const begun = performance.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', script], { stdio: 'inherit' });
    running.add(child);
    const settle = (code, signal) => {
      running.delete(child);
      resolve({ script, code, signal, seconds: (performance.now() - begun) / 1000 });
    };
    child.once('exit', settle);
    child.once('error', (error) => {
      process.stderr.write(`npm test: could not start npm run ${script}: ${error.message}\n`);
      settle(127, null);
    });
  });
}

// A signal to npm test (Ctrl-C reaches the children from the terminal; a SIGTERM does not) ends the steps too.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of running) child.kill(signal);
    process.exit(130);
  });
}

const outcomes = [];
for (const group of GROUPS) outcomes.push(...(await Promise.all(group.map(step))));

const failed = outcomes.filter((outcome) => outcome.code !== 0);
const width = Math.max(...outcomes.map((outcome) => outcome.script.length));
const lines = outcomes.map(({ script, code, signal, seconds }) => {
  const verdict = code === 0 ? 'passed' : `FAILED (${signal ? `killed by ${signal}` : `exit ${code}`})`;
  return `  ${script.padEnd(width)}  ${verdict}, ${Math.round(seconds)} s`;
});
process.stdout.write(
  `\nnpm test, every step:\n${lines.join('\n')}\n${
    failed.length === 0
      ? `all ${outcomes.length} steps passed\n`
      : `${failed.length} of ${outcomes.length} steps failed: ${failed.map((outcome) => outcome.script).join(', ')}\n`
  }`,
);
process.exit(failed.length === 0 ? 0 : 1);
