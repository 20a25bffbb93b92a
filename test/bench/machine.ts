/** What the numbers were measured on. */
import { execFileSync } from 'node:child_process';
import { cpus, freemem, loadavg, release, totalmem, type } from 'node:os';
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
