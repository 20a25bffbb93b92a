/**
 * `npm start` as its users run it (a child process on an ephemeral port, PORT=0, with its own temporary
 * `.local/`), for suites that need the whole local product: the base URL from its ready line, seeded keys,
 * and a stop that waits for the process to exit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface NpmStart {
  /** `http://127.0.0.1:<port>` (no /v1). */
  origin: string;
  output(): string;
  stop(): Promise<void>;
}

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Start `npm start` with `CATALOGUE_DEV_KEYS=devKeys`; resolves once it prints its ready URL.
 * @example const started = await npmStart(`free:${KEY}`); … await started.stop();
 */
export function npmStart(devKeys: string, readyWithinMs = 120_000): Promise<NpmStart> {
  const local = mkdtempSync(join(tmpdir(), 'cat-npm-start-'));
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', CATALOGUE_LOCAL_DIR: local, CATALOGUE_DEV_KEYS: devKeys },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    out += chunk;
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(local, { recursive: true, force: true });
  };
  return new Promise((ready, fail) => {
    const timer = setTimeout(() => {
      clearInterval(poll);
      void stop().then(() => fail(new Error(`npm start not ready in time:\n${out}`)));
    }, readyWithinMs);
    const poll = setInterval(() => {
      const url = /(http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(out);
      if (!url) return;
      clearInterval(poll);
      clearTimeout(timer);
      ready({ origin: url[1]!, output: () => out, stop });
    }, 100);
    child.once('exit', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      fail(new Error(`npm start exited with ${code}:\n${out}`));
    });
  });
}
