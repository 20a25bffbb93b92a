/** The log sink of the real servers: one JSON object per line on stdout (CloudWatch and `npm start`). */

/**
 * Write one log line.
 * @example logJson({ time: new Date().toISOString(), request_id: 'req_x', status: 200 })
 */
export function logJson(line: object): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
