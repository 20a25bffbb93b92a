/** What the numbers were measured on. */
import { execFileSync } from 'node:child_process';
import { type Dirent, readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus, freemem, loadavg, release, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { fmt, table } from './stats.js';

function tryRun(command: string, args: string[]): string | undefined {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

export function loadAverage(): string {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');
}

/** A size in a live process's /proc status, in bytes (`VmRSS`: now; `VmHWM`: its peak); none once it has exited. */
export function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}

/** A process's resident set (every thread), from /proc. */
export function rssOf(pid: number): number {
  return statusBytes(pid, 'VmRSS') ?? Number.NaN;
}

/**
 * Bytes of the files under `dir`, while a store writes and deletes them: a file or folder deleted between the
 * listing and its reading counts 0 (LevelDB deletes compacted files at any time).
 */
export function bytesUnder(dir: string): number {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let total = 0;
  for (const entry of entries) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? bytesUnder(path) : (statSync(path, { throwIfNoEntry: false })?.size ?? 0);
  }
  return total;
}

export function machineTable(): string {
  const cpu = cpus();
  const lscpu = tryRun('lscpu', [])?.split('\n') ?? [];
  const field = (name: string) =>
    lscpu
      .find((line) => line.startsWith(`${name}:`))
      ?.slice(name.length + 1)
      .trim();
  const model = field('Model name') ?? cpu[0]?.model ?? 'unknown';
  const mhz = cpu[0]?.speed ? ` @ ${cpu[0].speed} MHz` : '';
  const hypervisor = field('Hypervisor vendor');
  return table(
    ['CPU model', 'cores', 'memory', 'Node.js', 'OS', 'load average 1/5/15 min at start'],
    [
      [
        `${model}${mhz}${hypervisor ? ` (${hypervisor} virtual machine)` : ''}`,
        cpu.length,
        `${fmt.int(totalmem() / 2 ** 20)} MiB (${fmt.int(freemem() / 2 ** 20)} MiB free at start)`,
        process.version,
        `${type()} ${release()}`,
        loadAverage(),
      ],
    ],
  );
}
