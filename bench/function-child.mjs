// Section 10's child process: the synthesized Lambda asset, imported as the runtime imports it (with an
// `awslambda` global that streams as HttpResponseStream does), invoked one event at a time as a Lambda
// sandbox is. Plain JavaScript, so it runs on any Node.js binary without a loader.
//
//   node [V8 flags] bench/function-child.mjs cpu   <bundle> <requests.json> <rounds> <perRound>
//   node [V8 flags] bench/function-child.mjs flood <bundle> <requests.json> <sampleEvery>
//   node [V8 flags] bench/function-child.mjs misses <bundle> <plan.json>
//
// requests.json: [{ path, query, authorization }]; plan.json (misses): { warm: [request], hot: request,
// measured: [{ kind, ...request }] }, and BENCH_READS_URL the S3 stand-in's read count. Prints one JSON line of
// results on stdout; the proxy's own log lines go to a file (PROXY_LOG), not stdout.
import { openSync, readFileSync, writeSync } from 'node:fs';
import { Writable } from 'node:stream';

const [mode, bundle, requestsFile, a, b] = process.argv.slice(2);
const requests = JSON.parse(readFileSync(requestsFile, 'utf8'));

// The proxy logs with process.stdout.write: keep its lines out of the result line.
const logFd = openSync(process.env.PROXY_LOG ?? '/dev/null', 'a');
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk) => {
  writeSync(logFd, typeof chunk === 'string' ? chunk : Buffer.from(chunk));
  return true;
};

let status = 0;
globalThis.awslambda = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: {
    from(stream, prelude) {
      status = prelude.statusCode;
      return stream;
    },
  },
};
const { handler } = await import(bundle);

function eventOf(request) {
  return {
    version: '2.0',
    rawPath: request.path,
    rawQueryString: request.query,
    headers: {
      'x-catalogue-authorization': request.authorization,
      'accept-encoding': process.env.BENCH_ACCEPT_ENCODING ?? 'gzip, br',
    },
    requestContext: { http: { method: 'GET' } },
  };
}

let bytes = 0;
async function invoke(request) {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      bytes += chunk.length;
      done();
    },
  });
  await handler(eventOf(request), sink);
  return status;
}

/** Object GETs the S3 stand-in has served (BENCH_READS_URL), read outside any timed request. */
async function objectReads() {
  const { get } = await import('node:http');
  return new Promise((resolve, reject) => {
    get(process.env.BENCH_READS_URL, (response) => {
      let text = '';
      response.on('data', (chunk) => {
        text += chunk;
      });
      response.on('end', () => resolve(Number(text)));
    }).on('error', reject);
  });
}

const statuses = {};
const count = (s) => {
  statuses[s] = (statuses[s] ?? 0) + 1;
};

if (mode === 'cpu') {
  const rounds = Number(a);
  const perRound = Number(b);
  // Warm-up: connections, the key cache, the JIT, the byte cache holding the answer.
  for (let i = 0; i < 200; i++) count(await invoke(requests[i % requests.length]));
  const cpuUsPerRequest = [];
  for (let round = 0; round < rounds; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < perRound; i++) count(await invoke(requests[i % requests.length]));
    const used = process.cpuUsage(before);
    cpuUsPerRequest.push((used.user + used.system) / perRound);
  }
  write(`${JSON.stringify({ cpuUsPerRequest, statuses })}\n`);
} else if (mode === 'flood') {
  const sampleEvery = Number(a);
  const samples = [];
  const sample = (done) => {
    const m = process.memoryUsage();
    samples.push({ done, rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external });
  };
  sample(0);
  const started = performance.now();
  for (let i = 0; i < requests.length; i++) {
    count(await invoke(requests[i]));
    if ((i + 1) % sampleEvery === 0) sample(i + 1);
  }
  sample(requests.length);
  const peak = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;
  const seconds = (performance.now() - started) / 1000;
  // What is alive, as against what waits for a collection: heap spaces now, then the figures after a full
  // GC (Lambda's runtime passes --expose-gc).
  const { getHeapSpaceStatistics } = await import('node:v8');
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
  globalThis.gc?.();
  const m = process.memoryUsage();
  const afterGc = { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external };
  write(`${JSON.stringify({ samples, peakRss: peak, seconds, statuses, bytes, spaces, afterGc })}\n`);
} else if (mode === 'misses') {
  // One container: warmed (the pointer, every index shard, connections, the JIT), then each measured request
  // once — a miss reads its object, a hit reads nothing — timed (wall and CPU) one at a time.
  const { warm, hot, measured } = requests;
  for (const request of warm) count(await invoke(request));
  for (let i = 0; i < 200; i++) count(await invoke(hot));
  const readsBefore = await objectReads();
  const results = [];
  for (const request of measured) {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const answered = await invoke(request);
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpuBefore);
    count(answered);
    results.push({ kind: request.kind, ms, cpuUs: used.user + used.system, status: answered });
  }
  const reads = (await objectReads()) - readsBefore;
  write(`${JSON.stringify({ results, reads, statuses })}\n`);
}
process.exit(0);
