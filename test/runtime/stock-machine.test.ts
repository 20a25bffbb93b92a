/**
 * The README's two commands on a stock machine (package.json "optionalDependencies", "engines" and
 * "allowScripts"; docs/design.md, "One Node.js for every script"): a fresh copy of the repository outside the
 * working tree, run by a machine whose `node` is a real Node.js 20 (the machine's own when it has one) or 22 (the
 * npm registry's, cached once per machine) with the machine's npm. `npm ci` accepts both with no install-script
 * warning and installs the functions' Node.js as node_modules/.bin/node; every npm script, every tool it starts
 * and `npx` run on that release whatever the machine's `node`; `npm start` serves the README's first request on
 * it and stops whole on Ctrl-C or a SIGTERM to npm. Without the package (a platform the registry has
 * none for) the machine's own Node.js runs the scripts, and the two that cannot run on it say so in one
 * line. The copy shares this checkout's node_modules: `npm ci` itself is checked as a dry run of the whole
 * lockfile, and for real on a project of the Node.js package alone.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_NODE, nodeBinary, nodePackage, PREVIOUS_LAMBDA_NODE } from '../helpers/node-release.js';
import { publishedFixtureIn } from '../helpers/npm-start.js';
import { gathered } from '../helpers/start-process.js';
import { olderNode, stockMachine } from '../helpers/stock-machine.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
/** The functions' Node.js as `npm ci` installed it in this checkout. */
const RELEASE_BINARY = realpathSync(join(ROOT, 'node_modules', '.bin', 'node'));

let scratch: string;
/** A fresh copy with this checkout's node_modules, and one whose node_modules lacks the Node.js package. */
let copy: string;
let withoutPackage: string;
const machines: Record<'node20' | 'node22', { env: NodeJS.ProcessEnv; version: string; binary: string }> =
  {} as never;

/** Copy what git tracks (and new files it does not ignore) into `target`, outside the checkout. */
function freshCopy(target: string): string {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    try {
      cpSync(join(ROOT, file), join(target, file));
    } catch (error) {
      // Deleted in the working tree but not yet in the index.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return target;
}

/**
 * This checkout's node_modules as on a platform the registry has no Node.js package for: every package but the
 * node-<platform>-<arch> ones, every bin but `node`.
 */
function modulesWithoutNode(target: string): void {
  const source = join(ROOT, 'node_modules');
  mkdirSync(join(target, '.bin'), { recursive: true });
  for (const name of readdirSync(source)) {
    if (name === '.bin' || /^node-(linux|darwin|win)-/.test(name)) continue;
    symlinkSync(join(source, name), join(target, name));
  }
  for (const name of readdirSync(join(source, '.bin'))) {
    if (name === 'node') continue;
    symlinkSync(
      resolve(source, '.bin', readlinkSync(join(source, '.bin', name))),
      join(target, '.bin', name),
    );
  }
}

/** Run a command in a directory on a machine: exit code and output (a failure is a result, not a throw). */
async function inDir(
  cwd: string,
  env: NodeJS.ProcessEnv,
  command: string,
  args: string[],
  extra: NodeJS.ProcessEnv = {},
) {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, env: { ...env, ...extra } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
const inCopy = (env: NodeJS.ProcessEnv, command: string, args: string[], extra: NodeJS.ProcessEnv = {}) =>
  inDir(copy, env, command, args, extra);

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'cat-stock-machine-'));
  copy = freshCopy(join(scratch, 'catalogue-read-api'));
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  withoutPackage = freshCopy(join(scratch, 'without-package'));
  modulesWithoutNode(join(withoutPackage, 'node_modules'));
  const node20 = olderNode();
  const node22 = nodeBinary(PREVIOUS_LAMBDA_NODE.version);
  machines.node20 = {
    env: stockMachine(join(scratch, 'node20'), node20),
    version: execFileSync(node20, ['--version'], { encoding: 'utf8' }).trim(),
    binary: realpathSync(node20),
  };
  machines.node22 = {
    env: stockMachine(join(scratch, 'node22'), node22),
    version: `v${PREVIOUS_LAMBDA_NODE.version}`,
    binary: realpathSync(node22),
  };
}, 300_000);
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe.each(['node20', 'node22'] as const)('a machine with %s', (name) => {
  it('npm ci accepts it, with no install-scripts warning', async () => {
    const { env } = machines[name];
    const ci = await inCopy(env, 'npm', ['ci', '--dry-run']);

    expect(ci.code, ci.stderr).toBe(0);
    expect(`${ci.stdout}${ci.stderr}`).not.toMatch(/EBADENGINE|notsup|install scripts not yet covered/);
    expect(ci.stdout).toMatch(/added \d+ packages/);
  }, 60_000);

  it('every npm script, every tool and npx run on the functions’ release, with nothing said', async () => {
    const { env } = machines[name];
    const script = await inCopy(env, 'npm', ['run', '-s', 'catalogue', '--', '--version']);
    // tsx started by its `#!/usr/bin/env node`, from a script (`exec tsx admin/cli.ts`) and from npx.
    const tool = await inCopy(env, 'npm', ['run', '-s', 'keys', '--', '--version']);
    const npx = await inCopy(env, 'npx', ['tsx', 'admin/cli.ts', '--version']);

    expect(script).toMatchObject({ code: 0, stderr: '' });
    expect(script.stdout).toContain(`Node.js v${LAMBDA_NODE.version}`);
    expect(tool).toMatchObject({ code: 0, stderr: '' });
    expect(tool.stdout).toContain(`Node.js v${LAMBDA_NODE.version}`);
    expect(npx.stdout).toContain(`Node.js v${LAMBDA_NODE.version}`);
  }, 60_000);
});

describe('npm ci on Node.js 20 with npm 11, for real', () => {
  it('installs the package of this platform from the lockfile, with no script, as node_modules/.bin/node', async () => {
    // A project of the repository's lockfile entries of the Node.js packages alone (npm's cache is warm here:
    // bench/first-run.ts measures a download).
    const project = join(scratch, 'node-only');
    mkdirSync(project);
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    const { optionalDependencies } = lock.packages[''];
    const root = { name: 'node-only', version: '1.0.0', optionalDependencies };
    const packages: Record<string, unknown> = { '': root };
    for (const name of Object.keys(optionalDependencies))
      packages[`node_modules/${name}`] = lock.packages[`node_modules/${name}`];
    writeFileSync(join(project, 'package.json'), JSON.stringify(root));
    writeFileSync(
      join(project, 'package-lock.json'),
      JSON.stringify({
        name: root.name,
        version: root.version,
        lockfileVersion: 3,
        requires: true,
        packages,
      }),
    );
    const { env } = machines.node20;

    const ci = await inDir(project, env, 'npm', ['ci', '--no-audit', '--no-fund']);
    expect(ci.code, ci.stderr).toBe(0);
    expect(ci.stderr).not.toMatch(/install scripts|EBADPLATFORM|WARN/);
    expect(readdirSync(join(project, 'node_modules')).filter((entry) => entry !== '.bin')).toEqual(
      expect.arrayContaining([nodePackage()]),
    );
    expect(readdirSync(join(project, 'node_modules'))).toHaveLength(3); // .bin, this platform's, .package-lock.json
    const shown = await inDir(project, env, 'npm', ['exec', '--', 'node', '-p', 'process.versions.node']);
    expect(shown.stdout).toBe(`${LAMBDA_NODE.version}\n`);
  }, 180_000);
});

describe('without the Node.js package (a platform the registry has none for)', () => {
  it('Node.js 22: the scripts run on it as it comes', async () => {
    const shown = await inDir(withoutPackage, machines.node22.env, 'npm', [
      'run',
      '-s',
      'catalogue',
      '--',
      '--version',
    ]);

    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toContain(`Node.js v${PREVIOUS_LAMBDA_NODE.version}`);
  }, 60_000);

  it.each(['node20', 'node22'] as const)(
    '%s: npm test says in one line what it needs, and runs nothing',
    async (name) => {
      const { env, version } = machines[name];
      const tested = await inDir(withoutPackage, env, 'npm', ['test', '-s']);

      expect(tested.code).toBe(1);
      expect(tested.stdout).toBe('');
      expect(tested.stderr).toBe(
        `npm test runs on the Lambda functions' Node.js ${LAMBDA_NODE.major} and this is Node.js ${version}: npm ci ` +
          `installs Node.js ${LAMBDA_NODE.version} on Linux (x64, arm64); elsewhere use ` +
          `Node.js ${LAMBDA_NODE.version} (\`nvm use\` reads .nvmrc), then run npm test again\n`,
      );
    },
    60_000,
  );

  it('Node.js 20: npm start says in one line what it needs, before starting anything', async () => {
    const { env, version } = machines.node20;
    const started = await inDir(withoutPackage, env, 'npm', ['start', '-s'], {
      PORT: '0',
      CATALOGUE_LOCAL_DIR: join(scratch, 'local-refused'),
    });

    expect(started.code).toBe(1);
    expect(started.stderr).toBe(
      `npm start failed: Node.js ${version.slice(1)} is older than it runs on (22 or newer): npm ci installs the ` +
        "Lambda functions' Node.js 24 on Linux (x64, arm64); elsewhere install " +
        'Node.js 24 (`nvm install` reads .nvmrc), then run npm start again\n',
    );
    expect(existsSync(join(scratch, 'local-refused'))).toBe(false);
  }, 60_000);
});

describe('the README’s commands as CI runs them', () => {
  it('.ci/run runs the README’s test command with the machine’s Node.js as it comes', () => {
    const command = /^(npm ci && npm test)\b/m.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))?.[1];
    expect(command).toBe('npm ci && npm test');
    const lines = readFileSync(join(ROOT, '.ci', 'run'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));

    // Its npm commands are the README's, and nothing before them picks, installs or puts first another Node.js
    // (the one npm ci installs is what this proves on every submission).
    expect(lines.filter((line) => line.startsWith('npm '))).toEqual(command!.split(' && '));
    expect(lines.join('\n')).not.toMatch(
      /PATH=|\bnvm\b|\bfnm\b|volta|setup-node|nodejs|runtime\/|CATALOGUE_NODE/,
    );
  });

  it('exit codes, stdout, stderr and stdin are the command’s own', async () => {
    const { env } = machines.node20;
    const refused = await inCopy(env, 'npm', [
      'run',
      '-s',
      'catalogue',
      '--',
      'validate',
      '--source',
      'no-such',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--source no-such: no such directory\nrun with --help for usage\n');

    const echoed = await new Promise<string>((resolve, reject) => {
      const child = spawn('npm', ['exec', '--', 'node', '-e', 'process.stdin.pipe(process.stdout)'], {
        cwd: copy,
        env,
        stdio: ['pipe', 'pipe', 'ignore'],
      });
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
      });
      child.once('error', reject);
      child.once('exit', () => resolve(out));
      child.stdin.end('through stdin\n');
    });
    expect(echoed).toBe('through stdin\n');
  }, 60_000);
});

/**
 * `npm start` in the copy, in a process group of its own as a terminal's foreground job is, on a new data
 * directory (`local`, by default an empty one).
 */
function npmStart(
  env: NodeJS.ProcessEnv,
  local = mkdtempSync(join(scratch, 'local-')),
): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn('npm', ['start'], {
    cwd: copy,
    env: { ...env, PORT: '0', CATALOGUE_LOCAL_DIR: local },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = gathered(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output, exited };
}

/** The README's first request, as it shows it, and its answer's `data`. */
function readmeFirstRequest(): { path: string; data: unknown } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const path =
    /^curl -s -H "Authorization: Bearer \$CATALOGUE_KEY" 'http:\/\/127\.0\.0\.1:8787\/v1([^']+)'$/m.exec(
      readme,
    )?.[1];
  const answer = /^# (\{"data":.*)$/m.exec(readme)?.[1];
  if (!path || !answer) throw new Error('the README shows no first request');
  return { path, data: JSON.parse(answer.replace(/"next_cursor":"[^"]*"/, '"next_cursor":null')).data };
}

/** Wait for the ready screen; then the README's first request against it. */
async function serveFirstRequest(
  started: ReturnType<typeof npmStart>,
): Promise<{ status: number; data: unknown }> {
  for (
    let waited = 0;
    !/dev key \([^)]+\): pk_live_/.test(started.output()) || !started.output().includes('curl');
    waited += 100
  ) {
    if (started.child.exitCode !== null || waited > 150_000)
      throw new Error(`npm start never got ready:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const base = /Catalogue Read API ready at (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(started.output())![1];
  const key = /dev key \([^)]+\): (pk_live_[A-Za-z0-9_-]{22})/.exec(started.output())![1];
  const answer = await request(`${base}${readmeFirstRequest().path}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return { status: answer.statusCode, data: ((await answer.body.json()) as { data: unknown }).data };
}

/** Whether any process of the group is still there. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pgid: number): Promise<boolean> {
  for (let waited = 0; waited < 10_000; waited += 100) {
    if (!groupAlive(pgid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** The executables of the processes of a group that are a Node.js: pid → binary (resolved). */
async function nodesOf(pgid: number): Promise<Map<number, string>> {
  const { stdout } = await run('pgrep', ['-g', String(pgid)]);
  const nodes = new Map<number, string>();
  for (const pid of stdout.trim().split('\n').map(Number)) {
    try {
      const binary = realpathSync(`/proc/${pid}/exe`);
      if (binary === RELEASE_BINARY || /\/node$/.test(binary)) nodes.set(pid, binary);
    } catch {
      // Gone meanwhile.
    }
  }
  return nodes;
}

// The first as a newcomer's first start (it publishes the fixture); the second on the fixture already published
// there (the run's, test/helpers/published-fixture.ts): what it shows is how it stops.
describe.each([
  ['node20', 'SIGINT', 'Ctrl-C', 'new'],
  ['node22', 'SIGTERM', 'a SIGTERM to npm alone', 'published'],
] as const)('npm start on a machine with %s', (name, signal, how, data) => {
  it(`serves the README’s first request on the functions’ release; ${how} stops every process of it`, async () => {
    const { env, binary } = machines[name];
    const local = mkdtempSync(join(scratch, 'local-'));
    const started = npmStart(env, data === 'published' ? await publishedFixtureIn(local) : local);
    const pgid = started.child.pid!;
    try {
      const answer = await serveFirstRequest(started);
      expect(answer).toEqual({ status: 200, data: readmeFirstRequest().data });
      // npm itself runs on the machine's Node.js; local/start.ts and its servers' threads on the release.
      const nodes = await nodesOf(pgid);
      expect(nodes.get(pgid)).toBe(binary);
      nodes.delete(pgid);
      expect(nodes.size).toBeGreaterThan(0);
      expect(new Set(nodes.values())).toEqual(new Set([RELEASE_BINARY]));

      // Ctrl-C: the terminal sends SIGINT to its foreground process group. A process manager or a CI job's
      // timeout stops npm, not its children.
      if (signal === 'SIGINT') process.kill(-pgid, 'SIGINT');
      else started.child.kill('SIGTERM');
      expect(await gone(pgid)).toBe(true);
      expect(started.output()).toContain(`${signal}: stopping`);
    } finally {
      if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
    }
  }, 180_000);
});
