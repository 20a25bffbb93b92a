/**
 * The log sink of the real servers: one JSON object per line on stdout (CloudWatch and `npm start`).
 *
 * Lines are written together once per turn of the event loop, not one system call each: stdout is
 * synchronous for files, pipes and terminals on Linux, and under load a write per request cost a fifth of
 * the proxy's CPU (bench section 2). Nothing waits longer than the current turn; the Lambda adapter flushes
 * at the end of each invocation, and the process flushes on exit. On Lambda a request line also carries its
 * CloudWatch metrics (metrics.ts).
 */
import { requestMetrics } from './metrics.js';

/** Above this many characters waiting, the lines are written at once rather than at the end of the turn. */
const MAX_PENDING = 64 * 1024;

let pending = '';
let scheduled = false;
let flushOnExit = false;
/** Read once: the environment is the execution environment's. */
const metrics = requestMetrics(process.env);

/**
 * Write one log line (at the end of the current event-loop turn at the latest).
 * @example logJson({ time: new Date().toISOString(), request_id: 'req_x', status: 200 })
 */
export function logJson(line: object): void {
  const json = JSON.stringify(line);
  pending += `${metrics ? metrics.line(json, line) : json}\n`;
  if (!flushOnExit) {
    flushOnExit = true;
    process.on('exit', flushLog);
  }
  if (pending.length >= MAX_PENDING) flushLog();
  else if (!scheduled) {
    scheduled = true;
    setImmediate(flushLog);
  }
}

/**
 * Write every line still waiting, now.
 * @example logJson({ status: 200 }); flushLog(); // the line is on stdout
 */
export function flushLog(): void {
  scheduled = false;
  if (pending === '') return;
  const lines = pending;
  pending = '';
  process.stdout.write(lines);
}
