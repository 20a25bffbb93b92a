/**
 * Measurement script of issues 37 and 49 (not part of npm test): what the repository's Node.js costs a first run
 * on a stock machine, and what every later script pays. On the machine's own older Node.js (20;
 * test/helpers/stock-machine.ts). `npx tsx bench/first-run.ts [installs] [starts]`
 *
 * 1. the install: what `npm ci` adds for the functions' Node.js (package.json "optionalDependencies": the
 *    node-<platform>-<arch> package of the release), with an empty npm cache so the download is the whole
 *    package, as on a machine that never ran npm: a project of that one dependency, `npm ci` on Node.js 20, its
 *    wall time, the bytes downloaded (npm's cache afterwards) and installed (its node_modules), `installs` times;
 * 2. a later script: `npm run catalogue -- --version` on Node.js 20 (whose scripts run on node_modules/.bin/node,
 *    24) and on Node.js 24, 10 runs each, interleaved: medians;
 * 3. the first `npm start` of a fresh data directory on Node.js 20, to its ready line, `starts` times: medians.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LAMBDA_NODE, nodeBinary, nodePackage, sizeOf } from '../test/helpers/node-release.js';
import { olderNode, stockMachine } from '../test/helpers/stock-machine.js';
import { median } from './stats.js';

const INSTALLS = Number(process.argv[2] ?? 1);
const STARTS = Number(process.argv[3] ?? 1);
const ROOT = join(import.meta.dirname, '..');
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'first-run-'));

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The repository's lockfile entry of this machine's Node.js package, as `npm ci` installs it. */
function nodeOnlyProject(index: number): string {
  const project = mkdtempSync(join(work, `install-${index}-`));
  const name = nodePackage();
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const entry = lock.packages[`node_modules/${name}`];
  const optionalDependencies = { [name]: entry.version };
  const root = { name: 'first-run', version: '1.0.0', optionalDependencies };
  writeFileSync(join(project, 'package.json'), JSON.stringify(root));
  writeFileSync(
    join(project, 'package-lock.json'),
    JSON.stringify({
      name: 'first-run',
      version: '1.0.0',
      lockfileVersion: 3,
      requires: true,
      packages: { '': root, [`node_modules/${name}`]: entry },
    }),
  );
  return project;
}

async function installOnce(machine: NodeJS.ProcessEnv, index: number) {
  const project = nodeOnlyProject(index);
  const cache = join(project, '.npm-cache');
  const started = performance.now();
  await run('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: project,
    env: { ...machine, npm_config_cache: cache },
  });
  const ms = performance.now() - started;
  const { stdout } = await run('npm', ['exec', '--', 'node', '-p', 'process.version'], {
    cwd: project,
    env: machine,
  });
  if (stdout.trim() !== `v${LAMBDA_NODE.version}`) throw new Error(`ran on ${stdout.trim()}`);
  return { ms, downloaded: sizeOf(cache), installed: sizeOf(join(project, 'node_modules')) };
}

async function timed(env: NodeJS.ProcessEnv, command: string, args: string[]): Promise<number> {
  const started = performance.now();
  await run(command, args, { cwd: ROOT, env });
  return performance.now() - started;
}

/** `npm start` on a fresh data directory until its ready line; then stopped. Milliseconds to the line. */
async function startToReady(env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { ...env, PORT: '0', CATALOGUE_LOCAL_DIR: mkdtempSync(join(work, 'local-')) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk));
  try {
    for (;;) {
      if (out.includes('Ctrl-C stops it.')) return performance.now() - started;
      if (child.exitCode !== null) throw new Error(`npm start exited:\n${out}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    process.kill(-child.pid!, 'SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

async function main(): Promise<void> {
  const node20 = olderNode();
  const machine = stockMachine(join(work, 'node20'), node20);
  const node24 = stockMachine(join(work, 'node24'), nodeBinary(LAMBDA_NODE.version));
  const version = (await run(node20, ['--version'])).stdout.trim();
  process.stdout.write(
    `Node.js ${version} (${node20}), installing ${nodePackage()}@${LAMBDA_NODE.version}; load ${(await run('uptime')).stdout.trim()}\n\n`,
  );

  for (let i = 0; i < INSTALLS; i++) {
    const f = await installOnce(machine, i);
    process.stdout.write(
      `install ${i + 1}: ${s(f.ms)}, downloaded ${mb(f.downloaded)}, installed ${mb(f.installed)}\n`,
    );
  }

  const later = { node20: [] as number[], node24: [] as number[] };
  const versionCommand = ['run', '-s', 'catalogue', '--', '--version'];
  await timed(machine, 'npm', versionCommand); // the bundle built once, outside the figures
  for (let i = 0; i < 10; i++) {
    later.node20.push(await timed(machine, 'npm', versionCommand));
    later.node24.push(await timed(node24, 'npm', versionCommand));
  }
  process.stdout.write(
    `npm run catalogue -- --version, median of 10 (npm itself on the machine's Node.js, the script on node_modules/.bin/node): ` +
      `Node.js 20 ${median(later.node20).toFixed(0)} ms, Node.js 24 ${median(later.node24).toFixed(0)} ms ` +
      `(${(median(later.node20) / median(later.node24)).toFixed(2)}×)\n`,
  );

  if (STARTS === 0) return;
  const starts: number[] = [];
  for (let i = 0; i < STARTS; i++) starts.push(await startToReady(machine));
  process.stdout.write(
    `first npm start of a data directory on Node.js 20, to its ready line, median of ${STARTS}: ` +
      `${s(median(starts))} (all: ${starts.map(s).join(', ')})\n`,
  );
}

try {
  await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
