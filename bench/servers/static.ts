/**
 * Bench server (b), the static limit: a bare node:http server answering each request of the mix with the
 * exact status, headers and body the proxy gave it, from a Map keyed by URL and If-None-Match.
 * argv: <captured.json> — [{ url, ifNoneMatch, status, headers, body (base64) }]
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { listen, main, ready } from './child.js';

interface Captured {
  url: string;
  ifNoneMatch: string;
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}

main(async () => {
  const captured = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Captured[];
  const answers = new Map<
    string,
    { status: number; headers: Record<string, string | string[]>; body: Buffer }
  >();
  for (const entry of captured) {
    answers.set(`${entry.url}\n${entry.ifNoneMatch}`, {
      status: entry.status,
      headers: entry.headers,
      body: Buffer.from(entry.body, 'base64'),
    });
  }
  const server = createServer((request, response) => {
    request.resume();
    const answer = answers.get(`${request.url}\n${request.headers['if-none-match'] ?? ''}`);
    if (!answer) {
      response.writeHead(404, { 'content-length': 0 });
      response.end();
      return;
    }
    response.writeHead(answer.status, answer.headers);
    response.end(answer.body.byteLength > 0 ? answer.body : undefined);
  });
  const port = await listen(server);
  ready({ port, answers: answers.size });
});
