/**
 * Section 11: the upload builder as Lambda runs it. The synthesized asset (infra/upload-builder.ts, esbuild as
 * `cdk synth` bundles it) runs under the official runtime interface client (aws-lambda-ric) with the heap
 * flags Lambda's Node.js runtime sets for the function's memory, against the Runtime API emulator; the
 * bucket is s3rver in a process of its own; EventBridge is a loopback stand-in that keeps the events it gets.
 * For each catalogue size (BENCH_BUILDER_SIZES, default 25,000 modules): the snapshot archived with
 * `tar czf`, uploaded, and the S3 event of that upload invoked — a first publish (full build); then one
 * module renamed, uploaded again and invoked in the same (warm) process — an incremental publish. Measured:
 * wall time of each invocation, the process's CPU (user + system, from /proc) and its peak RSS (VmHWM), what
 * it wrote to its temporary directory, and the report and the event.
 *
 * s3rver stores each object as three files, so the full publish's wall time here is s3rver's, not the
 * builder's: the CPU time is the builder's own, and the README turns both into what AWS would take.
 * Then the bad and extreme uploads of builder-uploads.ts (BENCH_BUILDER_CASES). BENCH_BUILDER_SIZES=0 skips the
 * publishes, BENCH_BUILDER_CASES=none the uploads.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3Client } from '../aws/sdk.js';
import { generateSnapshot, writeSnapshot } from '../builder/synthetic/generate.js';
import { LAMBDA_NODE, nodeBinary } from '../test/helpers/node-release.js';
import { bundledBuilder, synth } from '../test/infra/helpers.js';
import {
  BUILDER_MEMORY_MB,
  builderEnv,
  heapFlags,
  processUsage,
  putEvent,
  startEventsStandIn,
} from './builder-harness.js';
import { benchBadUploads, builderCases } from './builder-uploads.js';
import { forkServer } from './children.js';
import { runtimeInterfaceClient } from './function-harness.js';
import { progress, type SectionResult, type Target } from './report.js';
import { startRuntimeApi } from './runtime-api.js';
import { BENCH_DIR, type Settings, STACK_BUCKET, WORK } from './settings.js';
import { fmt, table } from './stats.js';

const MB = 2 ** 20;
interface Run {
  kind: string;
  modules: number;
  archiveBytes: number;
  seconds: number;
  cpuSeconds: number;
  peakRssBytes: number;
  tmpFiles: number;
  outcome: string;
  objectsAdded: number;
  bytesAdded: number;
  eventBytes: number;
}

export async function benchBuilderFunction(settings: Settings): Promise<SectionResult> {
  const sizes = (process.env.BENCH_BUILDER_SIZES ?? String(settings.modules))
    .split(',')
    .map((size) => Number(size.trim()))
    .filter((size) => size > 0);
  const published = sizes.length > 0 ? await benchPublishes(settings, sizes) : undefined;
  const cases = builderCases();
  const bad = cases.length > 0 ? await benchBadUploads(cases) : undefined;
  return {
    markdown: [
      published?.markdown,
      bad && `Bad and extreme uploads, each in a fresh runtime process:\n\n${bad.markdown}`,
    ]
      .filter(Boolean)
      .join('\n'),
    targets: [...(published?.targets ?? []), ...(bad?.targets ?? [])],
    commands: [...(published?.commands ?? []), ...(bad?.commands ?? [])],
  };
}

/** Publishes by upload of the bench catalogue at each size: a full build, then one module renamed. */
async function benchPublishes(settings: Settings, sizes: readonly number[]): Promise<SectionResult> {
  const work = join(WORK, 'builder-function');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const ric = await runtimeInterfaceClient();
  if (!ric) throw new Error('aws-lambda-ric is not installed (see section 10)');
  const node = nodeBinary(LAMBDA_NODE.version);
  progress('11. synthesizing the stack: the upload builder as `cdk synth` bundles it');
  const asset = bundledBuilder(synth().assemblyDir);
  const taskRoot = join(work, 'task');
  mkdirSync(taskRoot, { recursive: true });
  for (const file of readdirSync(dirname(asset.path)))
    copyFileSync(join(dirname(asset.path), file), join(taskRoot, file));

  const runs: Run[] = [];
  const commands: string[] = [];
  for (const modules of sizes) {
    const s3Dir = join(work, `s3-${modules}`);
    const servers = await forkServer('s3rver + dynalite', join(BENCH_DIR, 'servers/stack.ts'), {
      args: [s3Dir, join(work, `dynamo-${modules}`)],
    });
    const events = await startEventsStandIn();
    const api = await startRuntimeApi({ deadlineMs: 900_000 });
    const tmp = join(work, `tmp-${modules}`);
    mkdirSync(tmp, { recursive: true });
    let child: ChildProcess | undefined;
    const client = s3Client({ endpoint: String(servers.ready.s3Endpoint) });
    try {
      const flags = heapFlags(BUILDER_MEMORY_MB);
      const env = builderEnv({
        api: api.address,
        taskRoot,
        tmp,
        s3Endpoint: String(servers.ready.s3Endpoint),
        eventsEndpoint: events.endpoint,
      });
      commands.push(
        `${node} ${flags.join(' ')} ${ric} index.handler  (LAMBDA_TASK_ROOT=<the synthesized asset>)`,
      );
      child = spawn(node, [...flags, ric, 'index.handler'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let log = '';
      child.stdout?.on('data', (chunk) => {
        log += chunk;
      });
      child.stderr?.on('data', (chunk) => {
        log += chunk;
      });
      const snapshot = generateSnapshot({ modules, seed: settings.seed });
      for (const [kind, edit] of [
        ['full build (first publish)', false],
        ['one module renamed (incremental)', true],
      ] as const) {
        if (edit) snapshot.modules[Math.floor(modules / 2)]!.name += ' (renamed)';
        const source = join(work, `snapshot-${modules}-${edit ? 'edited' : 'first'}`);
        await writeSnapshot(source, snapshot);
        const archive = join(work, `${modules}-${edit ? 'edited' : 'first'}.tar.gz`);
        execFileSync('tar', ['czf', archive, '-C', source, '.']);
        const body = readFileSync(archive);
        const key = `incoming/${new Date().toISOString().replace(/[-:.]/g, '')}-${modules}.tar.gz`;
        const put = await client.send(new PutObjectCommand({ Bucket: STACK_BUCKET, Key: key, Body: body }));
        progress(
          `11. ${fmt.int(modules)} modules, ${kind}: invoking the builder (archive ${fmt.int(body.byteLength)} B)`,
        );
        const before = processUsage(child.pid!);
        const started = performance.now();
        const died = new Promise<never>((_, reject) =>
          child!.once('exit', (code) =>
            reject(new Error(`the runtime exited ${code}:\n${log.slice(-3000)}`)),
          ),
        );
        const invocation = await Promise.race([
          api.invoke(putEvent(key, body.byteLength, put.ETag ?? '')),
          died,
        ]);
        const seconds = (performance.now() - started) / 1000;
        const after = processUsage(child.pid!);
        if (invocation.error)
          throw new Error(
            `the builder failed: ${invocation.body.toString().slice(0, 2000)}\n${log.slice(-3000)}`,
          );
        const reportKey = `reports/${key.slice('incoming/'.length, -'.tar.gz'.length)}.json`;
        const read = await client.send(new GetObjectCommand({ Bucket: STACK_BUCKET, Key: reportKey }));
        const report = JSON.parse(await read.Body!.transformToString());
        const entry = events.entries.at(-1) as { Detail: string };
        runs.push({
          kind,
          modules,
          archiveBytes: body.byteLength,
          seconds,
          cpuSeconds: after.cpuSeconds - before.cpuSeconds,
          peakRssBytes: after.peakRssBytes,
          tmpFiles: readdirSync(tmp).length,
          outcome: report.outcome,
          objectsAdded: report.changes?.objects_added ?? 0,
          bytesAdded: report.changes?.bytes_added ?? 0,
          eventBytes: Buffer.byteLength(entry?.Detail ?? ''),
        });
        progress(`11. ${kind}: ${report.outcome} in ${seconds.toFixed(1)} s`);
      }
    } finally {
      client.destroy();
      if (child && child.exitCode === null) child.kill('SIGKILL');
      api.reset('run over');
      await api.close();
      await events.close();
      await servers.stop();
      rmSync(s3Dir, { recursive: true, force: true });
    }
  }

  const targets: Target[] = runs
    .filter((run) => run.kind.startsWith('full'))
    .map((run) => ({
      name: `Upload builder under aws-lambda-ric, full build of ${fmt.int(run.modules)} modules`,
      target: `fits Lambda: peak RSS ≤ ${fmt.int(BUILDER_MEMORY_MB)} MB, nothing in /tmp`,
      measured: `peak RSS ${fmt.mb(run.peakRssBytes)}, ${run.tmpFiles} files in /tmp, CPU ${run.cpuSeconds.toFixed(1)} s, wall ${run.seconds.toFixed(1)} s (s3rver-bound)`,
      ok: run.peakRssBytes <= BUILDER_MEMORY_MB * MB && run.tmpFiles === 0 && run.outcome === 'published',
    }));
  const markdown = [
    `The asset: ${fmt.int(asset.bytes)} B (source map ${fmt.int(asset.mapBytes)} B), on Node.js ${LAMBDA_NODE.version} under aws-lambda-ric with Lambda's heap flags at ${fmt.int(BUILDER_MEMORY_MB)} MB (${heapFlags(BUILDER_MEMORY_MB).join(' ')}). One process for both invocations of a size, as a warm sandbox.`,
    '',
    table(
      [
        'modules',
        'invocation',
        'archive',
        'outcome',
        'objects added',
        'bytes added',
        'wall s',
        'CPU s (user+sys)',
        'peak RSS',
        '/tmp files',
        'event detail',
      ],
      runs.map((run) => [
        fmt.int(run.modules),
        run.kind,
        `${fmt.int(run.archiveBytes)} B`,
        run.outcome,
        fmt.int(run.objectsAdded),
        fmt.mb(run.bytesAdded),
        run.seconds.toFixed(1),
        run.cpuSeconds.toFixed(1),
        fmt.mb(run.peakRssBytes),
        run.tmpFiles,
        `${fmt.int(run.eventBytes)} B`,
      ]),
    ),
    '',
  ].join('\n');
  return { markdown, targets, commands };
}
