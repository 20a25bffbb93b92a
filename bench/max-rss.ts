/**
 * Fallback for machines without /usr/bin/time: run a script as the main module and print the process's
 * peak RSS on exit. Usage: node --import tsx bench/max-rss.ts <script> [args…]
 */
import { writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [script, ...rest] = process.argv.slice(2);
if (!script) throw new Error('usage: max-rss.ts <script> [args…]');
process.argv = [process.argv[0]!, resolve(script), ...rest];
process.on('exit', () => {
  const usage = process.resourceUsage();
  writeSync(
    2,
    `BENCH_MAX_RSS_KB=${usage.maxRSS} BENCH_USER_S=${usage.userCPUTime / 1e6} BENCH_SYSTEM_S=${usage.systemCPUTime / 1e6}\n`,
  );
});
await import(pathToFileURL(resolve(script)).href);
