/**
 * Servers the tests run on loopback: listening on an ephemeral port, and closed with every connection they
 * still hold (kept-alive ones included), so a suite leaves nothing listening.
 */
import type { Server } from 'node:net';

/** Listen on 127.0.0.1, an ephemeral port; resolves with the port, rejects if the server cannot listen. */
export async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no port');
  return address.port;
}

/** Stop listening and drop every connection (an HTTP server's, idle or not); resolves once it is closed. */
export function closeServer(
  server: (Server & { closeAllConnections?: () => void }) | undefined,
): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server) return resolve();
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}
