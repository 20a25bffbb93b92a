/**
 * npm start's port checks (local/port.ts): a port held by a real listener is not free, its holder is named
 * from the system's tables (this very process), and the message names the fix.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  explainPortInUse,
  freePortAfter,
  listenOrExplain,
  portFree,
  portHolder,
  portInUseMessage,
} from '../../local/port.js';

let held: Server;
let port: number;
beforeAll(async () => {
  held = createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  port = (held.address() as { port: number }).port;
});
afterAll(() => {
  held?.close();
});

describe('a port in use', () => {
  it('is not free, and its holder is this process', async () => {
    expect(await portFree(port)).toBe(false);
    const holder = portHolder(port);
    expect(holder?.pid).toBe(process.pid);
    expect(holder?.command).toContain(process.execPath.split('/').pop());
  });

  it('is explained with the holder and a free port to use instead', async () => {
    const message = await explainPortInUse(port);
    expect(message).toMatch(
      new RegExp(`^port ${port} on 127\\.0\\.0\\.1 is in use by process ${process.pid} \\(`),
    );
    const suggested = Number(/PORT=(\d+) npm start$/.exec(message)?.[1]);
    expect(suggested).toBeGreaterThan(port);
    expect(await portFree(suggested)).toBe(true);
  });

  it('fails a later listen with the same message, not a bare EADDRINUSE', async () => {
    await expect(listenOrExplain(createServer(), port)).rejects.toThrow(
      new RegExp(`^port ${port} on 127\\.0\\.0\\.1 is in use by process ${process.pid} `),
    );
  });

  it('is free once its holder is gone', async () => {
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const gone = (other.address() as { port: number }).port;
    await new Promise((resolve) => other.close(resolve));
    expect(await portFree(gone)).toBe(true);
    expect(portHolder(gone)).toBeUndefined();
    expect(await freePortAfter(gone - 1)).toBeGreaterThanOrEqual(gone);
  });
});

describe('portInUseMessage', () => {
  it('says whether the holder looks like another npm start, and what to do', () => {
    expect(portInUseMessage(8787, { pid: 42, command: 'node --import tsx local/start.ts' }, 8788)).toBe(
      'port 8787 on 127.0.0.1 is in use by process 42 (node --import tsx local/start.ts), which looks like ' +
        'another npm start: use it, or stop it (Ctrl-C in its terminal); or start this one on another port: ' +
        'PORT=8788 npm start',
    );
    expect(portInUseMessage(8787, { pid: 7, command: 'python3 -m http.server 8787' }, 8790)).toBe(
      'port 8787 on 127.0.0.1 is in use by process 7 (python3 -m http.server 8787): stop it, or start this one ' +
        'on another port: PORT=8790 npm start',
    );
    expect(portInUseMessage(8787, undefined, undefined)).toBe(
      'port 8787 on 127.0.0.1 is in use (by a process this user cannot see: `ss -ltnp` or `lsof -i :8787` may ' +
        'name it): stop it, or start this one on another port: PORT=0 npm start',
    );
  });
});
