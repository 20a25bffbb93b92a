/** A tiny loopback HTTP client that keeps exact status, headers and body bytes (for captures and walks). */
import { Agent, request } from 'node:http';

export interface Reply {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** Headers Node's server adds by itself to every answer; the static server adds its own. */
const TRANSPORT_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

export function get(port: number, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const kept: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined && !TRANSPORT_HEADERS.has(name)) kept[name] = value;
        }
        resolve({ status: res.statusCode ?? 0, headers: kept, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.setTimeout(60_000, () => req.destroy(new Error(`GET ${path}: timeout`)));
    req.on('error', reject);
    req.end();
  });
}

/** A list body as the API and json-server send them (only what the bench reads). */
export interface ListBody {
  data: { id: number }[];
  page?: { next_cursor: string | null };
}

export function json<T = ListBody>(reply: Reply): T {
  return JSON.parse(reply.body.toString('utf8')) as T;
}

export function closeClient(): void {
  agent.destroy();
}
