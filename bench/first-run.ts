/**
 * Measurement script of issue 37 (not part of npm test): what the first npm script on a stock machine costs —
 * runtime/node.sh fetching the repository's Node.js from the npm registry — and what every later one costs. On
 * the machine's own older Node.js (20; test/helpers/stock-machine.ts), with nothing cached: an npm cache and a
 * Node.js cache of its own in a temporary directory, so the download is the whole package, as on a machine
 * that never ran npm. `npx tsx bench/first-run.ts [fetches] [starts]`
 *
 * 1. the fetch: `. runtime/node.sh` in a script's shell, its wall time, the bytes downloaded (npm's cache
 *    afterwards) and the bytes installed, `fetches` times (each with empty caches);
 * 2. a later script: `. runtime/node.sh` alone, and `npm run catalogue -- --version`, on Node.js 20 (switching to
 *    the cached 24) and on Node.js 24 (nothing to switch), 10 runs each, interleaved: medians;
 * 3. the first `npm start` of a fresh data directory on Node.js 20, to its ready line, with the caches empty and
 *    again with them warm, `starts` times each, interleaved: medians.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LAMBDA_NODE, nodeBinary, sizeOf } from '../runtime/node.mjs';
import { olderNode, stockMachine } from '../test/helpers/stock-machine.js';
import { median } from './stats.js';

const FETCHES = Number(process.argv[2] ?? 1);
const STARTS = Number(process.argv[3] ?? 1);
const ROOT = join(import.meta.dirname, '..');
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'first-run-'));

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Empty caches for one first run: the Node.js cache and npm's. */
function emptyCaches(label: string): NodeJS.ProcessEnv {
  const caches = mkdtempSync(join(work, `${label}-`));
  return { CATALOGUE_NODE_CACHE: join(caches, 'node'), npm_config_cache: join(caches, 'npm') };
}

async function fetchOnce(machine: NodeJS.ProcessEnv, index: number) {
  const caches = emptyCaches(`fetch-${index}`);
  const started = performance.now();
  const { stdout } = await run('sh', ['-c', '. runtime/node.sh && node -p process.version'], {
    cwd: ROOT,
    env: {
      ...machine,
      ...caches,
      npm_lifecycle_event: 'start',
      npm_package_json: join(ROOT, 'package.json'),
    },
  });
  const ms = performance.now() - started;
  if (stdout.trim() !== `v${LAMBDA_NODE.version}`) throw new Error(`ran on ${stdout.trim()}`);
  return {
    ms,
    downloaded: sizeOf(caches.npm_config_cache!),
    installed: sizeOf(caches.CATALOGUE_NODE_CACHE!),
  };
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
    `Node.js ${version} (${node20}), fetching ${LAMBDA_NODE.version}; load ${(await run('uptime')).stdout.trim()}\n\n`,
  );

  const fetches = [];
  for (let i = 0; i < FETCHES; i++) fetches.push(await fetchOnce(machine, i));
  for (const [i, f] of fetches.entries()) {
    process.stdout.write(
      `fetch ${i + 1}: ${s(f.ms)}, downloaded ${mb(f.downloaded)}, installed ${mb(f.installed)}\n`,
    );
  }

  // What runtime/node.sh itself costs a later script: on Node.js 20 it finds the cached binary, on 24 it has
  // nothing to find; neither starts a process.
  const sourced = { node20: [] as number[], node24: [] as number[] };
  const script = ['-c', '. runtime/node.sh'];
  // The script's shell as npm sets it up: its lifecycle event, package and user agent.
  const asNpm = (name: string, release: string) => ({
    npm_lifecycle_event: 'start',
    npm_package_json: join(ROOT, 'package.json'),
    npm_node_execpath: join(work, name, 'node'),
    npm_config_user_agent: `npm/11 node/${release} ${process.platform} ${process.arch} workspaces/false`,
  });
  for (let i = 0; i < 10; i++) {
    sourced.node20.push(await timed({ ...machine, ...asNpm('node20', version) }, 'sh', script));
    sourced.node24.push(
      await timed({ ...node24, ...asNpm('node24', `v${LAMBDA_NODE.version}`) }, 'sh', script),
    );
  }
  process.stdout.write(
    `\n. runtime/node.sh, median of 10: on Node.js 20 (switching to the cached 24) ${median(sourced.node20).toFixed(0)} ms, ` +
      `on Node.js 24 (nothing to switch) ${median(sourced.node24).toFixed(0)} ms\n`,
  );

  const later = { node20: [] as number[], node24: [] as number[] };
  const versionCommand = ['run', '-s', 'catalogue', '--', '--version'];
  await timed(machine, 'npm', versionCommand); // the bundle built once, outside the figures
  for (let i = 0; i < 10; i++) {
    later.node20.push(await timed(machine, 'npm', versionCommand));
    later.node24.push(await timed(node24, 'npm', versionCommand));
  }
  process.stdout.write(
    `npm run catalogue -- --version, median of 10 (npm itself on the machine's Node.js): Node.js 20 → 24 ${median(later.node20).toFixed(0)} ms, ` +
      `Node.js 24 ${median(later.node24).toFixed(0)} ms (${(median(later.node20) / median(later.node24)).toFixed(2)}×)\n`,
  );

  if (STARTS === 0) return;
  const starts = { cold: [] as number[], warm: [] as number[] };
  for (let i = 0; i < STARTS; i++) {
    starts.cold.push(await startToReady({ ...machine, ...emptyCaches(`start-${i}`) }));
    starts.warm.push(await startToReady(machine));
  }
  process.stdout.write(
    `first npm start of a data directory on Node.js 20, to its ready line, median of ${STARTS}: ` +
      `caches empty ${s(median(starts.cold))}, warm ${s(median(starts.warm))} ` +
      `(all: ${starts.cold.map(s).join(', ')} / ${starts.warm.map(s).join(', ')})\n`,
  );
}

try {
  await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
