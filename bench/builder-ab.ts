/**
 * Two upload-builder assets side by side as Lambda runs them (issue 38: no source maps at start, no terminal
 * code in the bundle), beside an empty function: each round spawns the official runtime interface client
 * (aws-lambda-ric, section 10's) on Node.js 24 with the heap flags Lambda sets at 3,008 MB, once per asset and
 * once for an empty handler, in turn (the order rotates each round), against the Runtime API emulator, and
 * times:
 * - cold start: spawn → the end of a first, trivial invocation (an S3 event with no records: the handler
 *   reads its settings and returns), the same event for the empty handler;
 * - first real invocation: the S3 event of an upload of the fixture catalogue, invoked next in the same
 *   process (the catalogue already live: every round publishes the same bytes, outcome `unchanged`);
 * - peak RSS (VmHWM) of the runtime process after both.
 * The bucket is s3rver in a process of its own; no events are sent (EVENT_BUS_NAME=none).
 *
 *   npx tsx bench/builder-ab.ts --base <dir> --base-node-options=--enable-source-maps --new <dir> [--rounds 10]
 *
 * (a directory is the asset's, holding index.mjs and its map: `dirname(bundledBuilder(synth().assemblyDir).path)`
 * of test/infra/helpers.ts in each tree.)
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { s3Client } from '../aws/sdk.js';
import { LAMBDA_NODE, nodeBinary } from '../test/helpers/node-release.js';
import { BUILDER_MEMORY_MB, heapFlags, putEvent } from './builder-harness.js';
import { forkServer, stopAll } from './children.js';
import { endRuntime, runtimeInterfaceClient } from './function-harness.js';
import { statusBytes } from './machine.js';
import { startRuntimeApi } from './runtime-api.js';
import { BENCH_DIR, REPO, STACK_BUCKET, WORK } from './settings.js';
import { fmt, median, table } from './stats.js';

const MEMORY_MB = BUILDER_MEMORY_MB;
/** Lambda's heap flags for the function's memory (as section 11 sets them). */
const HEAP_FLAGS = heapFlags(MEMORY_MB);

interface Variant {
  name: string;
  taskRoot: string;
  nodeOptions: string;
  /** The empty handler has no upload to publish. */
  publishes: boolean;
}

interface Sample {
  coldMs: number;
  firstInvocationMs?: number;
  peakRssBytes: number;
}

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    'base-node-options': { type: 'string', default: '' },
    new: { type: 'string' },
    'new-node-options': { type: 'string', default: '' },
    rounds: { type: 'string', default: '10' },
  },
});
if (!values.base || !values.new) {
  throw new Error(
    'usage: npx tsx bench/builder-ab.ts --base <dir> [--base-node-options=…] --new <dir> [--new-node-options=…] [--rounds N]',
  );
}
const rounds = Number(values.rounds);

/** VmHWM of a live process, in bytes. */
function peakRss(pid: number): number {
  return statusBytes(pid, 'VmHWM') ?? 0;
}

/** One cold process of `variant`: spawn → trivial invocation → (an upload's invocation) → peak RSS. */
async function coldProcess(
  variant: Variant,
  env: NodeJS.ProcessEnv,
  upload: () => Promise<unknown>,
): Promise<Sample> {
  const node = nodeBinary(LAMBDA_NODE.version);
  const ric = (await runtimeInterfaceClient())!;
  const api = await startRuntimeApi({ deadlineMs: 900_000 });
  let child: ChildProcess | undefined;
  try {
    const started = performance.now();
    child = spawn(node, [...HEAP_FLAGS, ric, 'index.handler'], {
      env: {
        ...env,
        NODE_OPTIONS: variant.nodeOptions,
        AWS_LAMBDA_RUNTIME_API: api.address,
        LAMBDA_TASK_ROOT: variant.taskRoot,
        _HANDLER: 'index.handler',
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const died = new Promise<never>((_, reject) =>
      child!.on('exit', (code) => reject(new Error(`${variant.name}: the runtime exited ${code}`))),
    );
    const cold = await Promise.race([api.invoke({ Records: [] }), died]);
    if (cold.error) throw new Error(`${variant.name}: ${cold.body.toString().slice(0, 500)}`);
    const sample: Sample = { coldMs: cold.endedAt - started, peakRssBytes: 0 };
    if (variant.publishes) {
      const event = await upload();
      const begun = performance.now();
      const first = await Promise.race([api.invoke(event), died]);
      if (first.error) throw new Error(`${variant.name}: ${first.body.toString().slice(0, 500)}`);
      sample.firstInvocationMs = first.endedAt - begun;
    }
    sample.peakRssBytes = peakRss(child.pid!);
    return sample;
  } finally {
    await endRuntime(child, api);
  }
}

const work = join(WORK, 'builder-ab');
rmSync(work, { recursive: true, force: true });
mkdirSync(join(work, 'empty'), { recursive: true });
writeFileSync(join(work, 'empty', 'index.mjs'), 'export const handler = async () => {};\n');
const variants: Variant[] = [
  { name: 'empty function', taskRoot: join(work, 'empty'), nodeOptions: '', publishes: false },
  { name: 'base', taskRoot: values.base, nodeOptions: values['base-node-options'], publishes: true },
  { name: 'new', taskRoot: values.new, nodeOptions: values['new-node-options'], publishes: true },
];
const archive = join(work, 'fixture.tar.gz');
execFileSync('tar', ['czf', archive, '-C', join(REPO, 'fixtures', 'catalogue'), '.']);
const body = readFileSync(archive);
const servers = await forkServer('s3rver + dynalite', join(BENCH_DIR, 'servers/stack.ts'), {
  args: [join(work, 's3'), join(work, 'dynamo')],
});
const s3Endpoint = String(servers.ready.s3Endpoint);
const client = s3Client({ endpoint: s3Endpoint });
let uploads = 0;
const upload = async () => {
  const key = `incoming/bench-${String(++uploads).padStart(4, '0')}.tar.gz`;
  const put = await client.send(new PutObjectCommand({ Bucket: STACK_BUCKET, Key: key, Body: body }));
  return putEvent(key, body.byteLength, put.ETag ?? '');
};
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  AWS_REGION: 'us-east-1',
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(MEMORY_MB),
  AWS_LAMBDA_FUNCTION_NAME: 'bench-upload-builder',
  AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
  AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/bench-upload-builder',
  AWS_LAMBDA_LOG_STREAM_NAME: 'bench',
  CATALOGUE_BUCKET: STACK_BUCKET,
  CATALOGUE_PREFIX: 'catalogue/',
  INCOMING_PREFIX: 'incoming/',
  REPORTS_PREFIX: 'reports/',
  EVENT_BUS_NAME: 'none',
  BUILD_BUDGET_SECONDS: '600',
  S3_ENDPOINT: s3Endpoint,
};
const samples = new Map<string, Sample[]>(variants.map((v) => [v.name, []]));
try {
  // The fixture published once first, so every measured invocation finds it live (outcome unchanged).
  await coldProcess(variants[2]!, env, upload);
  for (let round = 0; round < rounds; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
    for (const variant of order) samples.get(variant.name)!.push(await coldProcess(variant, env, upload));
    process.stderr.write(`round ${round + 1}/${rounds}\n`);
  }
} finally {
  client.destroy();
  await stopAll([servers]);
}

const of = (name: string, pick: (s: Sample) => number | undefined) =>
  samples
    .get(name)!
    .map(pick)
    .filter((n): n is number => n !== undefined);
const spread = (xs: number[]) =>
  `${fmt.ms(median(xs))} (${fmt.ms(Math.min(...xs))}–${fmt.ms(Math.max(...xs))})`;
const emptyCold = median(of('empty function', (s) => s.coldMs));
const size = (dir: string, file: string) => statSync(join(dir, file), { throwIfNoEntry: false })?.size ?? 0;
const rows = variants.map((v) => {
  const cold = of(v.name, (s) => s.coldMs);
  const first = of(v.name, (s) => s.firstInvocationMs);
  const rss = of(v.name, (s) => s.peakRssBytes);
  return [
    v.name,
    v.publishes
      ? `${fmt.int(size(v.taskRoot, 'index.mjs'))} B (map ${fmt.int(size(v.taskRoot, 'index.mjs.map'))} B)`
      : '—',
    v.nodeOptions || '(none)',
    spread(cold),
    fmt.x(median(cold) / emptyCold),
    first.length > 0 ? spread(first) : '—',
    fmt.mb(median(rss)),
  ];
});
process.stdout.write(
  `${table(
    [
      'function',
      'asset',
      'NODE_OPTIONS',
      'cold start ms (spawn → first answer), median (min–max)',
      '× empty',
      'first upload invocation ms',
      'peak RSS',
    ],
    rows,
  )}\n`,
);
process.stdout.write(
  `${JSON.stringify(Object.fromEntries([...samples].map(([name, s]) => [name, s])), null, 0)}\n`,
);
