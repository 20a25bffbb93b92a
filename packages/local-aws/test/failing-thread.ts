/**
 * A thread module for threads.test.ts that fails on purpose, as a server thread could: `crash` reports ready
 * and then throws an uncaught error; `exit` ends the thread before it is ready.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ThreadMessage, ThreadSpec } from '../src/thread-protocol.js';

const how = (workerData as ThreadSpec).s3?.bucket;
if (how === 'exit') process.exit(3);
const served = { endpoint: 'http://127.0.0.1:9', port: 9 };
parentPort!.postMessage({ type: 'ready', servers: { s3: served, dynamodb: served } } satisfies ThreadMessage);
setTimeout(() => {
  throw new Error('the server failed while serving');
}, 50);
