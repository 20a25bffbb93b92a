/**
 * The end-to-end proxy: exactly the production wiring (proxy/app.ts createProxy over loadConfig()), with
 * S3 and DynamoDB endpoints from the environment (s3rver and dynalite of the stack child), behind the
 * node:http adapter. The request log goes to stdout (which the parent points at /dev/null) through the
 * production logger; log lines of 5xx answers are also kept, so the parent can say what failed.
 */
import { createHttpServer } from '../../proxy/adapters/http.js';
import { createProxy, logJson } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import type { RequestLogLine } from '../../proxy/core/types.js';
import { listen, main, onCommand, ready } from './child.js';

const KEPT = 200;

main(async () => {
  const config = loadConfig();
  if (!config.ok) throw new Error(`configuration: ${config.problems.join('; ')}`);
  let failures: RequestLogLine[] = [];
  let failureCount = 0;
  const log = (line: RequestLogLine) => {
    if (line.status >= 500) {
      failureCount++;
      if (failures.length < KEPT) failures.push(line);
    }
    logJson(line);
  };
  // The 5xx log lines since the last call (at most KEPT of them, and how many there were).
  onCommand('failures', () => {
    const answer = { lines: failures, count: failureCount };
    failures = [];
    failureCount = 0;
    return answer;
  });
  const port = await listen(createHttpServer(createProxy(config, { log })));
  ready({ port });
});
