/**
 * Parent side of the bench's child processes: every server runs in its own process (the load generator
 * stays in the parent), talks over the IPC channel, and is stopped at the end — also on failure.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { basename, join } from 'node:path';
import { REPO, WORK } from './settings.js';

const live = new Set<ChildProcess>();

export interface ChildMessage {
  type: string;
  id?: number;
  error?: string;
  [key: string]: unknown;
}

export interface ServerChild {
  name: string;
  process: ChildProcess;
  /** The child's `ready` message (port, counts…). */
  ready: ChildMessage;
  /** Send a command and wait for its answer. */
  request(type: string, payload?: Record<string, unknown>, timeoutMs?: number): Promise<ChildMessage>;
  /** Ask the child to shut down cleanly, then kill it if it does not exit in time. */
  stop(): Promise<void>;
}

export interface ForkOptions {
  args?: string[];
  /** Extra node flags (the TypeScript loader is added unless `bundled`). */
  nodeFlags?: string[];
  /**
   * Run the script as the Lambda runs the proxy: one ESM bundle made by esbuild (infra/proxy-function.ts
   * bundles with these options, for Node 22), no TypeScript loader. tsx keeps every function's name with a
   * helper call each time a closure is created, a cost the deployed code does not have.
   */
  bundled?: boolean;
  env?: Record<string, string>;
  readyTimeoutMs?: number;
  /** The bundle's file name under .work/bundles (default: the script's): two trees' scripts side by side. */
  bundleName?: string;
}

/** Bundle `script` as infra/proxy-function.ts bundles the Lambda (ESM, everything inlined). */
async function bundle(script: string, name = basename(script, '.ts')): Promise<string> {
  const { build } = await import('esbuild');
  const outfile = join(WORK, 'bundles', `${name}.mjs`);
  await build({
    entryPoints: [script],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    mainFields: ['module', 'main'],
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    // The Lambda's bundle is minified too; here names are kept readable for the profile tables (esbuild only
    // renames on collisions and adds no helper calls).
    minify: false,
    logLevel: 'warning',
  });
  return outfile;
}

/**
 * Start `script` (a .ts file) with `node --import tsx`, wait for its `ready` message.
 * stdout goes to /dev/null (request log lines are still produced), stderr to ours.
 */
export async function forkServer(
  name: string,
  script: string,
  options: ForkOptions = {},
): Promise<ServerChild> {
  const entry = options.bundled ? await bundle(script, options.bundleName) : script;
  const child = fork(entry, options.args ?? [], {
    cwd: REPO,
    execArgv: [
      ...(options.bundled ? [] : ['--import', 'tsx']),
      '--no-warnings',
      ...(options.nodeFlags ?? []),
    ],
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let nextId = 1;
  const pending = new Map<number, (message: ChildMessage) => void>();
  child.on('message', (message: ChildMessage) => {
    if (message.id !== undefined) {
      pending.get(message.id)?.(message);
      pending.delete(message.id);
    }
  });

  const ready = await new Promise<ChildMessage>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name}: not ready after ${options.readyTimeoutMs ?? 600_000} ms`)),
      options.readyTimeoutMs ?? 600_000,
    );
    const onMessage = (message: ChildMessage) => {
      if (message.type === 'ready') done(() => resolve(message));
      if (message.type === 'failed') done(() => reject(new Error(`${name}: ${message.error}`)));
    };
    const onExit = (code: number | null, signal: string | null) =>
      done(() => reject(new Error(`${name} exited before it was ready (code ${code}, signal ${signal})`)));
    const done = (settle: () => void) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      settle();
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  }).catch((error) => {
    child.kill('SIGKILL');
    throw error;
  });

  return {
    name,
    process: child,
    ready,
    request(type, payload = {}, timeoutMs = 120_000) {
      const id = nextId++;
      return new Promise<ChildMessage>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${name}: no answer to ${type} within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, (message) => {
          clearTimeout(timer);
          if (message.error) reject(new Error(`${name}: ${type}: ${message.error}`));
          else resolve(message);
        });
        child.send({ ...payload, type, id });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      if (child.connected) child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** Run a command to completion (tracked, so a failure elsewhere still kills it). */
export async function runCommand(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CommandResult> {
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: REPO,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 1_800_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  live.delete(child);
  return { code, stdout, stderr, seconds: (performance.now() - started) / 1000 };
}

/** Track a child spawned elsewhere, so a failure or the exit guard kills it too. */
export function trackChild(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

/** Kill every child still running (failure path and exit guard). */
export function killAll(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}

/** Stop children cleanly, in reverse start order. */
export async function stopAll(children: (ServerChild | undefined)[]): Promise<void> {
  for (const child of [...children].reverse()) {
    if (!child) continue;
    try {
      await child.stop();
    } catch {
      child.process.kill('SIGKILL');
    }
  }
}

process.once('exit', killAll);
