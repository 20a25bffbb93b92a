/**
 * The dynamic peer: json-server 0.17 over a db.json of the same catalogue, as `json-server --quiet db.json`
 * runs it (its default middlewares without the request logger, and its router over the file).
 * argv: <db.json>
 */
import { createRequire } from 'node:module';
import { listen, main, ready } from './child.js';

interface JsonServer {
  create(): import('node:http').RequestListener & { use(handler: unknown): void };
  defaults(options: { logger: boolean }): unknown;
  router(source: string): unknown;
}

main(async () => {
  const jsonServer = createRequire(import.meta.url)('json-server') as JsonServer;
  const app = jsonServer.create();
  app.use(jsonServer.defaults({ logger: false }));
  app.use(jsonServer.router(process.argv[2]!));
  const { createServer } = await import('node:http');
  const port = await listen(createServer(app));
  ready({ port });
});
