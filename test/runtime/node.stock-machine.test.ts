/**
 * The README's two commands on a stock machine (runtime/node.sh, package.json "engines" and "allowScripts"):
 * a fresh copy of the repository outside the working tree, run by a machine whose `node` is a real Node.js 20
 * (the machine's own when it has one) or 22 (the npm registry's, cached once per machine as bench section 10's
 * is) with the machine's npm. `npm ci` accepts both, with no install-script warning; every npm script runs on a
 * Node.js the repository supports — 20 gets the repository's Node.js 24 (from the same cache, so nothing is
 * fetched here: bench/first-run.ts measures a first fetch), 22 runs the tools as it comes and the tests on
 * 24; `npm start` serves the README's first request either way, and stops whole on Ctrl-C or a SIGTERM to npm.
 * The copy shares this checkout's node_modules: `npm ci` itself is checked as a dry run, which resolves every
 * package of the lockfile and checks its engines.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_NODE, nodeBinary, PREVIOUS_LAMBDA_NODE } from '../../runtime/node.mjs';
import { gathered } from '../helpers/npm-start.js';
import { olderNode, stockMachine } from '../helpers/stock-machine.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
/** The line every npm script starts with. */
const SOURCED = '. runtime/node.sh && ';

let scratch: string;
let copy: string;
const machines: Record<'node20' | 'node22', { env: NodeJS.ProcessEnv; version: string }> = {} as never;

/** Copy what git tracks (and new files it does not ignore) into a directory outside the checkout. */
function freshCopy(): string {
  const target = join(scratch, 'catalogue-read-api');
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
  symlinkSync(join(ROOT, 'node_modules'), join(target, 'node_modules'));
  return target;
}

/** Run a command in the copy on a machine: exit code and output (a failure is a result, not a throw). */
async function inCopy(
  env: NodeJS.ProcessEnv,
  command: string,
  args: string[],
  extra: NodeJS.ProcessEnv = {},
) {
  try {
    const { stdout, stderr } = await run(command, args, { cwd: copy, env: { ...env, ...extra } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'cat-stock-machine-'));
  copy = freshCopy();
  nodeBinary(LAMBDA_NODE.version);
  const node20 = olderNode();
  const node22 = nodeBinary(PREVIOUS_LAMBDA_NODE.version);
  machines.node20 = {
    env: stockMachine(join(scratch, 'node20'), node20),
    version: execFileSync(node20, ['--version'], { encoding: 'utf8' }).trim(),
  };
  machines.node22 = {
    env: stockMachine(join(scratch, 'node22'), node22),
    version: `v${PREVIOUS_LAMBDA_NODE.version}`,
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
});

describe('which Node.js each npm script runs on', () => {
  it('Node.js 20: every script runs on the repository release, and says so on stderr', async () => {
    const { env, version } = machines.node20;
    const shown = await inCopy(env, 'npm', ['run', '-s', 'catalogue', '--', '--version']);

    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`Node.js v${LAMBDA_NODE.version}`);
    expect(shown.stderr).toBe(
      `Node.js ${version} is older than npm run catalogue needs (22): it runs on Node.js ${LAMBDA_NODE.version} (runtime/node.sh)\n`,
    );
  }, 60_000);

  it('Node.js 22: the tools run on it as it comes, with nothing said or fetched', async () => {
    const shown = await inCopy(machines.node22.env, 'npm', ['run', '-s', 'catalogue', '--', '--version']);

    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toContain(`Node.js v${PREVIOUS_LAMBDA_NODE.version}`);
  }, 60_000);

  it.each([
    ['node22', 'test', LAMBDA_NODE.version],
    ['node22', 'test:unit', LAMBDA_NODE.version],
    ['node22', 'bench', LAMBDA_NODE.version],
    ['node22', 'start', PREVIOUS_LAMBDA_NODE.version],
    ['node20', 'start', LAMBDA_NODE.version],
    ['node20', 'test', LAMBDA_NODE.version],
  ] as const)('%s, npm run %s: Node.js %s', async (name, script, expected) => {
    // The script's own shell, as npm sets it up: runtime/node.sh sourced, then a command.
    const shown = await inCopy(machines[name].env, 'sh', ['-c', `${SOURCED}node -p process.versions.node`], {
      npm_lifecycle_event: script,
      npm_package_json: join(copy, 'package.json'),
    });

    expect(shown).toMatchObject({ code: 0, stdout: `${expected}\n` });
  });

  it('Node.js 20, a later script: the cached release is found by the shell alone, no process started', async () => {
    // A repository of runtime/node.sh and .nvmrc only: had it asked runtime/node.mjs, the script would fail.
    const bare = join(scratch, 'bare');
    mkdirSync(join(bare, 'runtime'), { recursive: true });
    cpSync(join(ROOT, 'runtime', 'node.sh'), join(bare, 'runtime', 'node.sh'));
    cpSync(join(ROOT, '.nvmrc'), join(bare, '.nvmrc'));
    const { env, version } = machines.node20;
    const node = join(scratch, 'node20', 'node');

    const shown = await run('sh', ['-c', `${SOURCED}node -p process.versions.node`], {
      cwd: bare,
      env: {
        ...env,
        npm_lifecycle_event: 'catalogue',
        npm_package_json: join(bare, 'package.json'),
        npm_node_execpath: node,
        npm_config_user_agent: `npm/11.19.1 node/${version} ${process.platform} ${process.arch} workspaces/false`,
      },
    });

    expect(shown.stdout).toBe(`${LAMBDA_NODE.version}\n`);
    expect(shown.stderr).toContain(`it runs on Node.js ${LAMBDA_NODE.version}`);
  });

  it('Node.js 20: the npm scripts a switched one runs (npm test’s) are not switched again, nor say so', async () => {
    // As the npm that `npm test` runs on the release finds it: the release first on PATH and as npm's Node.js,
    // and the user agent the first npm (on Node.js 20) handed on.
    const { env, version } = machines.node20;
    const release = nodeBinary(LAMBDA_NODE.version);
    const nested = await inCopy(env, 'sh', ['-c', `${SOURCED}node -p process.versions.node`], {
      PATH: `${dirname(release)}:${env.PATH}`,
      npm_lifecycle_event: 'typecheck',
      npm_package_json: join(copy, 'package.json'),
      npm_node_execpath: release,
      npm_config_user_agent: `npm/11.19.1 node/${version} ${process.platform} ${process.arch} workspaces/false`,
    });

    expect(nested).toEqual({ code: 0, stdout: `${LAMBDA_NODE.version}\n`, stderr: '' });
  });

  it('runtime/node.sh is POSIX sh as ShellCheck reads it (npm runs scripts with sh: dash on Debian)', async () => {
    // Debian's ShellCheck, as the operator's guide's check uses it (.ci/run installs it).
    const checked = await run('shellcheck', ['--shell=sh', join(ROOT, 'runtime', 'node.sh')]);
    expect(checked.stdout).toBe('');
  });

  it('every npm script starts by sourcing runtime/node.sh, so none runs on an older Node.js', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };

    const without = Object.entries(scripts).filter(([, script]) => !script.startsWith(SOURCED));
    expect(without).toEqual([]);
  });

  it('.ci/run runs the README’s test command with the machine’s Node.js as it comes', () => {
    const command = /^(npm ci && npm test)\b/m.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))?.[1];
    expect(command).toBe('npm ci && npm test');
    const lines = readFileSync(join(ROOT, '.ci', 'run'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));

    // Its npm commands are the README's, and nothing before them picks, installs or puts first another Node.js
    // (runtime/node.sh, which every script sources, is what this proves on every submission).
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
      const child = spawn('sh', ['-c', `${SOURCED}node -e "process.stdin.pipe(process.stdout)"`], {
        cwd: copy,
        env: { ...env, npm_lifecycle_event: 'start', npm_package_json: join(copy, 'package.json') },
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

/** `npm start` in the copy, in a process group of its own as a terminal's foreground job is. */
function npmStart(env: NodeJS.ProcessEnv): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn('npm', ['start'], {
    cwd: copy,
    env: { ...env, PORT: '0', CATALOGUE_LOCAL_DIR: mkdtempSync(join(scratch, 'local-')) },
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

describe('npm start on a stock machine', () => {
  it('Node.js 20: serves the README’s first request on Node.js 24; Ctrl-C stops every process of it', async () => {
    const started = npmStart(machines.node20.env);
    const pgid = started.child.pid!;
    try {
      const answer = await serveFirstRequest(started);
      expect(answer).toEqual({ status: 200, data: readmeFirstRequest().data });
      expect(started.output()).toContain(`it runs on Node.js ${LAMBDA_NODE.version}`);

      // Ctrl-C: the terminal sends SIGINT to its foreground process group.
      process.kill(-pgid, 'SIGINT');
      expect(await gone(pgid)).toBe(true);
      expect(started.output()).toContain('SIGINT: stopping');
    } finally {
      if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
    }
  }, 180_000);

  it('Node.js 22: serves it on Node.js 22 as it comes; a SIGTERM to npm alone stops every process of it', async () => {
    const started = npmStart(machines.node22.env);
    const pgid = started.child.pid!;
    try {
      const answer = await serveFirstRequest(started);
      expect(answer).toEqual({ status: 200, data: readmeFirstRequest().data });
      expect(started.output()).not.toContain('is older than');

      // A process manager or a CI job's timeout stops npm, not its children.
      started.child.kill('SIGTERM');
      expect(await gone(pgid)).toBe(true);
      expect(started.output()).toContain('SIGTERM: stopping');
    } finally {
      if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
    }
  }, 180_000);
});
