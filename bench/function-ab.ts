/**
 * Two proxy assets side by side (section 10's CPU step, A/B): the CPU per warm request of each, in its own
 * process with Lambda's heap flags at 512 MB, alternating A, B, A, B… against the same stand-ins (the fixture
 * catalogue on the S3 stand-in, keys and counters in one dynalite, the cursor secret in the Secrets Manager
 * stand-in), each asset's size, and the bytes of its request log lines. For a change that must leave the hot
 * path as it was:
 *
 *   npx tsx bench/function-ab.ts <base>/index.mjs <new>/index.mjs [rounds]
 *
 * With METRICS_NAMESPACE set, both run with the stack's request metrics on (proxy/log/metrics.ts), as version 1.
 *
 * (an asset path is what `bundledProxy(synth().assemblyDir)` of test/infra/helpers.ts gives, in each tree.)
 */
import { statSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LAMBDA_NODE, nodeBinary } from '../test/helpers/node-release.js';
import { runCli } from './build.js';
import { forkServer, stopAll } from './children.js';
import {
  benchFunctionEnv,
  LAMBDA_512_FLAGS,
  runChild,
  seedBenchKey,
  startS3StandIn,
  startSecretsStandIn,
} from './function-harness.js';
import { BENCH_DIR, BENCH_KEY, WORK } from './settings.js';
import { median } from './stats.js';

const [base, next, roundsArg] = process.argv.slice(2);
if (!base || !next)
  throw new Error('usage: npx tsx bench/function-ab.ts <base index.mjs> <new index.mjs> [rounds]');
const rounds = Number(roundsArg ?? 6);
const work = join(WORK, 'function-ab');
await rm(work, { recursive: true, force: true });
await mkdir(work, { recursive: true });
const published = join(work, 'catalogue');
await runCli(['build', '--source', join(BENCH_DIR, '../../fixtures/catalogue'), '--out', published]);
const s3 = await startS3StandIn(published);
const secrets = await startSecretsStandIn();
const dynamo = await forkServer('dynalite', join(BENCH_DIR, 'servers/dynalite.ts'));
try {
  await seedBenchKey(String(dynamo.ready.endpoint));
  const env: NodeJS.ProcessEnv = {
    ...benchFunctionEnv({
      s3: s3.endpoint,
      dynamodb: String(dynamo.ready.endpoint),
      secrets: secrets.endpoint,
    }),
    ...(process.env.METRICS_NAMESPACE && {
      METRICS_NAMESPACE: process.env.METRICS_NAMESPACE,
      AWS_LAMBDA_FUNCTION_VERSION: '1',
    }),
  };
  /** Each asset's log lines in a file of its own: their bytes per request line are compared. */
  const logOf = (name: string) => join(work, `${name}.log`);
  const hot = join(work, 'hot.json');
  await writeFile(
    hot,
    JSON.stringify([
      { path: '/v1/modules', query: 'limit=20&sort=name', authorization: `Bearer ${BENCH_KEY}` },
    ]),
  );
  const node = nodeBinary(LAMBDA_NODE.version);
  const cpu: Record<'base' | 'new', number[]> = { base: [], new: [] };
  for (let round = 0; round < rounds; round++) {
    for (const [name, asset] of [
      ['base', base],
      ['new', next],
    ] as const) {
      const result = await runChild<{ cpuUsPerRequest: number[]; statuses: Record<string, number> }>(
        node,
        LAMBDA_512_FLAGS,
        ['cpu', pathToFileURL(asset).href, hot, '4', '500'],
        { ...env, PROXY_LOG: logOf(name) },
      );
      if (Object.keys(result.statuses).some((status) => status !== '200'))
        throw new Error(`${name}: warm requests answered ${JSON.stringify(result.statuses)}`);
      cpu[name].push(median(result.cpuUsPerRequest));
    }
  }
  const [a, b] = [median(cpu.base), median(cpu.new)];
  const [sizeA, sizeB] = [statSync(base).size, statSync(next).size];
  const lineBytes = async (name: string) => {
    const lines = (await readFile(logOf(name), 'utf8')).split('\n').filter((l) => l.includes('"request_id"'));
    return Math.round(lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0) / lines.length);
  };
  const [linesA, linesB] = [await lineBytes('base'), await lineBytes('new')];
  console.log(
    JSON.stringify({
      cpuUsPerRequest: { base: cpu.base.map(Math.round), new: cpu.new.map(Math.round) },
      median: { base: Math.round(a), new: Math.round(b), ratio: Number((b / a).toFixed(3)) },
      assetBytes: { base: sizeA, new: sizeB, ratio: Number((sizeB / sizeA).toFixed(4)) },
      requestLineBytes: { base: linesA, new: linesB, ratio: Number((linesB / linesA).toFixed(3)) },
    }),
  );
} finally {
  await s3.close();
  await secrets.close();
  await stopAll([dynamo]);
}
