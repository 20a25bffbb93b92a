/**
 * `npm start`'s ports: whether one is free (checked before anything is published or started), which process
 * holds one that is not (Linux: /proc, the user's own processes), and the message that names the fix.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer as createNetServer, type Server } from 'node:net';

const HOST = '127.0.0.1';

/** Whether `port` can be listened on at 127.0.0.1 right now: a listen, closed at once. */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(false);
      else reject(error);
    });
    probe.listen(port, HOST, () => probe.close(() => resolve(true)));
  });
}

export interface PortHolder {
  pid: number;
  /** Its command line, as `ps` shows it. */
  command: string;
}

/** The inodes of the sockets listening on `port` (any address), from the kernel's socket tables. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const [, local, , state] = fields;
      if (state === '0A' && local?.endsWith(`:${hexPort}`) && fields[9]) inodes.add(fields[9]);
    }
  }
  return inodes;
}

/**
 * The process listening on `port`, where the system says (Linux, a process of this user); undefined
 * elsewhere, or when it is another user's.
 */
export function portHolder(port: number): PortHolder | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // another user's, or gone
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) {
        let command = '';
        try {
          command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
        } catch {
          // gone meanwhile: the pid is still worth naming
        }
        return { pid: Number(pid), command };
      }
    }
  }
  return undefined;
}

/**
 * The first port after `port` (up to 20 tried) that is free with the `span - 1` ports after it, to suggest
 * (span 2: `PORT` and the admin API's default, `PORT` + 1); undefined if none is.
 */
export async function freePortAfter(port: number, span = 1): Promise<number | undefined> {
  for (let candidate = port + 1; candidate + span - 1 <= Math.min(port + 20, 65535); candidate++) {
    let free = true;
    for (let next = candidate; free && next < candidate + span; next++) free = await portFree(next);
    if (free) return candidate;
  }
  return undefined;
}

/** How a holder is named in a message: ` by process 1234 (node server.js)`, or nothing if unknown. */
export function describeHolder(holder: PortHolder | undefined): string {
  if (!holder) return '';
  const command = holder.command.length > 120 ? `${holder.command.slice(0, 117)}…` : holder.command;
  return ` by process ${holder.pid}${command ? ` (${command})` : ''}`;
}

/**
 * Why `npm start` cannot serve on `port`, and the fix.
 * @example portInUseMessage(8787, { pid: 4242, command: 'node --import tsx local/start.ts' }, 8788)
 * // → 'port 8787 on 127.0.0.1 is in use by process 4242 (node --import tsx local/start.ts), which looks like
 * //    another npm start: use it, or stop it (Ctrl-C in its terminal); or start this one on another port:
 * //    PORT=8788 npm start'
 */
export function portInUseMessage(
  port: number,
  holder: PortHolder | undefined,
  suggestion: number | undefined,
  variable: 'PORT' | 'ADMIN_PORT' = 'PORT',
): string {
  const ours = holder?.command.includes('local/start.ts');
  const stop = ours
    ? ', which looks like another npm start: use it, or stop it (Ctrl-C in its terminal); or'
    : holder
      ? ': stop it, or'
      : ' (by a process this user cannot see: `ss -ltnp` or `lsof -i :PORT` may name it): stop it, or';
  return (
    `port ${port} on ${HOST} is in use${describeHolder(holder)}${stop.replace('PORT', String(port))} ` +
    `start this one on another port: ${variable}=${suggestion ?? 0} npm start`
  );
}

/**
 * The message for `port` (set by `variable`), with its holder and a free port to suggest, as the system tells
 * them now; `span` as {@link freePortAfter}'s.
 */
export async function explainPortInUse(
  port: number,
  variable: 'PORT' | 'ADMIN_PORT' = 'PORT',
  span = 1,
): Promise<string> {
  return portInUseMessage(port, portHolder(port), await freePortAfter(port, span), variable);
}

/**
 * Listen on 127.0.0.1:`port`; a port taken meanwhile (after the check at start) fails with the same message
 * as the check.
 */
export async function listenOrExplain(server: Server, port: number): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    throw new Error(await explainPortInUse(port));
  }
}
