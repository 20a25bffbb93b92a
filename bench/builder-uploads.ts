/**
 * Section 11, bad and extreme uploads (issue 36): the upload builder's handler, as Lambda runs it (the
 * synthesized asset under aws-lambda-ric with Lambda's heap flags at 3,008 MB), on uploads that once crashed it
 * or took it near its memory, each in a fresh runtime process (a cold sandbox) so that its peak RSS is its own:
 * - `bomb`: an 11.6 KB archive whose modules.json is 10 MiB of `{}`;
 * - `export`: a bad export of 70,000 modules with two wrong fields each (140,000 problems);
 * - `largest`: the largest upload the limits allow, just under 512 MiB once decompressed: modules.json filled
 *   with generated modules (about a million: refused for the record limit);
 * - `padded`: as large, a valid catalogue (the fixture) whose modules.json is padded with whitespace (published).
 * BENCH_BUILDER_CASES picks some (default all four); BENCH_BUILDER_BASE names another checkout (e.g. a
 * worktree of main) whose asset runs the same cases, alternating with this one's, for a side-by-side reading.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3Client } from '../aws/sdk.js';
import { generateSnapshot } from '../builder/synthetic/generate.js';
import { UPLOAD_LIMITS } from '../builder/upload/archive.js';
import { FIXTURE_DIR } from '../test/helpers/builder.js';
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
import { forkServer } from './children.js';
import { runtimeInterfaceClient } from './function-harness.js';
import { progress, type Target } from './report.js';
import { startRuntimeApi } from './runtime-api.js';
import { BENCH_DIR, STACK_BUCKET, WORK } from './settings.js';
import { fmt, table } from './stats.js';

const MB = 2 ** 20;
/** The function's timeout (infra/upload-builder.ts). */
const FUNCTION_TIMEOUT_MS = 900_000;
const CASES = ['bomb', 'export', 'largest', 'padded'] as const;
type Case = (typeof CASES)[number];

interface CaseRun {
  asset: string;
  case: Case;
  archiveBytes: number;
  expandedBytes: number;
  seconds: number;
  cpuSeconds: number;
  peakRssBytes: number;
  /** The report's outcome, or how the runtime ended when it wrote none. */
  outcome: string;
  problemCount: number | null;
  reportBytes: number;
  eventBytes: number;
}

/** The cases BENCH_BUILDER_CASES names (default all). */
export function builderCases(): Case[] {
  const raw = process.env.BENCH_BUILDER_CASES?.trim();
  if (raw === undefined) return [...CASES];
  if (raw === '' || raw === 'none') return [];
  return raw.split(',').map((name) => {
    if (!(CASES as readonly string[]).includes(name.trim()))
      throw new Error(`BENCH_BUILDER_CASES: ${name} is not one of ${CASES.join(', ')}`);
    return name.trim() as Case;
  });
}

/** Write `bytes` of `fill` after `head` and before `tail` into `path`, in 16 MiB writes. */
function writePadded(path: string, head: string, fill: string, bytes: number, tail: string): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head);
    const block = fill.repeat(Math.ceil((16 * MB) / fill.length));
    let left = bytes - Buffer.byteLength(head) - Buffer.byteLength(tail);
    while (left > 0) {
      const part = block.slice(0, Math.min(left, block.length));
      writeSync(fd, part);
      left -= part.length;
    }
    writeSync(fd, tail);
  } finally {
    closeSync(fd);
  }
}

/** The snapshot directory of a case (the fixture's other three files, and its modules.json). */
function caseSource(work: string, which: Case): string {
  const dir = join(work, `source-${which}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const file of ['standards.json', 'tags.json', 'manufacturers.json']) {
    copyFileSync(join(FIXTURE_DIR, file), join(dir, file));
  }
  const modules = join(dir, 'modules.json');
  // Just under the limit: the tar's headers, padding and end blocks take the rest (checked below).
  const largest = UPLOAD_LIMITS.expandedBytes - 256 * 1024;
  if (which === 'bomb') {
    writePadded(modules, '[{}', ',{}', Math.floor((10 * MB) / 3) * 3 + 1, ']');
  } else if (which === 'export') {
    const fixture = JSON.parse(readFileSync(join(FIXTURE_DIR, 'modules.json'), 'utf8')) as object[];
    const bad = Array.from({ length: 70_000 }, (_, i) => ({
      ...fixture[i % fixture.length],
      id: i + 1,
      hp: 0,
      depth_mm: -5,
    }));
    writePadded(modules, JSON.stringify(bad), ' ', 0, '');
  } else if (which === 'padded') {
    const text = readFileSync(join(FIXTURE_DIR, 'modules.json'), 'utf8').trimEnd();
    writePadded(modules, text, ' ', largest, '\n');
  } else {
    // Generated modules (with their own standards, tags and manufacturers: every reference holds, so the
    // records up to the limit are valid and kept, the worst case), repeated with fresh ids, just under the limit.
    const generated = generateSnapshot({ modules: 5_000, seed: 36 });
    for (const kind of ['standards', 'tags', 'manufacturers'] as const) {
      writePadded(join(dir, `${kind}.json`), JSON.stringify(generated[kind]), ' ', 0, '');
    }
    const fd = openSync(modules, 'w');
    try {
      let size = writeSync(fd, '[');
      for (let i = 0; size < largest - 4_000; i++) {
        const record = { ...generated.modules[i % generated.modules.length], id: i + 1 };
        size += writeSync(fd, `${i === 0 ? '' : ','}${JSON.stringify(record)}`);
      }
      writeSync(fd, ']');
    } finally {
      closeSync(fd);
    }
  }
  return dir;
}

/**
 * The asset of another checkout (BENCH_BUILDER_BASE), synthesized there as `cdk synth` bundles it, copied into
 * its own task root (the synthesis's directory goes with the process that made it).
 */
function baseTaskRoot(work: string, checkout: string): string {
  const root = join(work, 'task-base');
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const script =
    "const { cpSync } = await import('node:fs'); const { dirname } = await import('node:path'); " +
    "const { bundledBuilder, synth } = await import('./test/infra/helpers.ts'); " +
    `cpSync(dirname(bundledBuilder(synth().assemblyDir).path), ${JSON.stringify(root)}, { recursive: true });`;
  execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: checkout,
    stdio: 'ignore',
  });
  return root;
}

/** Copy an asset's directory into a task root of its own. */
function taskRoot(work: string, name: string, assetPath: string): string {
  const root = join(work, `task-${name}`);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  for (const file of readdirSync(dirname(assetPath)))
    copyFileSync(join(dirname(assetPath), file), join(root, file));
  return root;
}

interface Harness {
  ric: string;
  node: string;
  client: S3Client;
  s3Endpoint: string;
  events: Awaited<ReturnType<typeof startEventsStandIn>>;
}

/** Upload `archive` and invoke its event in a fresh runtime process running the asset in `root`. */
async function runCase(
  harness: Harness,
  asset: { name: string; root: string },
  which: Case,
  archive: Buffer,
): Promise<CaseRun> {
  const key = `incoming/${new Date().toISOString().replace(/[-:.]/g, '')}-${asset.name}-${which}.tar.gz`;
  const put = await harness.client.send(
    new PutObjectCommand({ Bucket: STACK_BUCKET, Key: key, Body: archive }),
  );
  const api = await startRuntimeApi({ deadlineMs: 900_000 });
  // Each builder publishes into a catalogue of its own: what one leaves (a killed build's objects) is not the other's.
  const env: Record<string, string> = builderEnv({
    prefix: `${asset.name}/`,
    api: api.address,
    taskRoot: asset.root,
    tmp: join(asset.root, 'tmp'),
    s3Endpoint: harness.s3Endpoint,
    eventsEndpoint: harness.events.endpoint,
  });
  // A builder before issue 36 signed its calls to the local S3 with the role's credentials, which s3rver
  // refuses: it runs without them, so that what it does with the upload is measured.
  if (asset.name === 'base') {
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) delete env[name];
  }
  mkdirSync(join(asset.root, 'tmp'), { recursive: true });
  const child: ChildProcess = spawn(
    harness.node,
    [...heapFlags(BUILDER_MEMORY_MB), harness.ric, 'index.handler'],
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let usage = { cpuSeconds: 0, peakRssBytes: 0 };
  // Sampled while it runs: a builder that dies (out of memory) leaves its last sample.
  const measure = () => {
    try {
      const now = processUsage(child.pid!);
      // The highest seen: a dying process (a zombie) shows no VmHWM any more.
      usage = {
        cpuSeconds: Math.max(usage.cpuSeconds, now.cpuSeconds),
        peakRssBytes: Math.max(usage.peakRssBytes, now.peakRssBytes),
      };
    } catch {
      // It exited between the check and the read.
    }
  };
  const sample = setInterval(measure, 200);
  let stderr = '';
  let timedOut = false;
  child.stderr?.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-64_000);
  });
  const sentBefore = harness.events.entries.length;
  const started = performance.now();
  try {
    const died = new Promise<'died'>((resolve) => child.once('exit', () => resolve('died')));
    // Lambda stops an invocation at the function's timeout (900 s): so does the bench.
    const timeout = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, FUNCTION_TIMEOUT_MS);
    died.finally(() => clearTimeout(timeout));
    const ended = await Promise.race([api.invoke(putEvent(key, archive.byteLength, put.ETag ?? '')), died]);
    const seconds = (performance.now() - started) / 1000;
    if (child.exitCode === null) measure();
    const reportKey = `reports/${key.slice('incoming/'.length, -'.tar.gz'.length)}.json`;
    const read = await harness.client
      .send(new GetObjectCommand({ Bucket: STACK_BUCKET, Key: reportKey }))
      .catch(() => undefined);
    const reportText = read ? await read.Body!.transformToString() : '';
    const report = reportText
      ? (JSON.parse(reportText) as { outcome: string; problem_count: number })
      : undefined;
    const entry = harness.events.entries.slice(sentBefore).at(-1) as { Detail: string } | undefined;
    return {
      asset: asset.name,
      case: which,
      archiveBytes: archive.byteLength,
      expandedBytes: 0,
      seconds,
      ...usage,
      outcome:
        report?.outcome ??
        (timedOut
          ? `timed out at ${FUNCTION_TIMEOUT_MS / 1000} s (killed, as Lambda would)`
          : ended === 'died'
            ? `crashed (exit ${child.exitCode ?? child.signalCode}): ${crashReason(stderr)}`
            : `${ended.error ? 'failed' : 'answered'}, no report: ${ended.body.toString().slice(0, 200)}`),
      problemCount: report?.problem_count ?? null,
      reportBytes: Buffer.byteLength(reportText),
      eventBytes: Buffer.byteLength(entry?.Detail ?? ''),
    };
  } finally {
    clearInterval(sample);
    if (child.exitCode === null) child.kill('SIGKILL');
    api.reset('case over');
    await api.close();
  }
}

/**
 * Why a runtime died, in V8's words ("Reached heap limit Allocation failed - JavaScript heap out of memory"):
 * its fatal line, not the native stack after it, which names the binary's path on this machine.
 */
function crashReason(stderr: string): string {
  const fatal = /FATAL ERROR: *([^\n]*)/.exec(stderr)?.[1];
  if (fatal) return fatal.trim();
  const last = stderr.trim().split('\n').at(-1) ?? '';
  return last.replace(/\/\S*/g, '…').replace(/\s+/g, ' ').slice(0, 200) || 'nothing on stderr';
}

/** Run the cases against this checkout's asset (and BENCH_BUILDER_BASE's, alternating). */
export async function benchBadUploads(
  cases: readonly Case[],
): Promise<{ markdown: string; targets: Target[]; commands: string[] }> {
  const work = join(WORK, 'builder-uploads');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const ric = await runtimeInterfaceClient();
  if (!ric) throw new Error('aws-lambda-ric is not installed (see section 10)');
  progress('11. bad uploads: synthesizing the upload builder as `cdk synth` bundles it');
  const assets = [{ name: 'this', root: taskRoot(work, 'this', bundledBuilder(synth().assemblyDir).path) }];
  const base = process.env.BENCH_BUILDER_BASE?.trim();
  if (base) assets.push({ name: 'base', root: baseTaskRoot(work, base) });
  const servers = await forkServer('s3rver + dynalite', join(BENCH_DIR, 'servers/stack.ts'), {
    args: [join(work, 's3'), join(work, 'dynamo')],
  });
  const events = await startEventsStandIn();
  const s3Endpoint = String(servers.ready.s3Endpoint);
  const harness: Harness = {
    ric,
    node: nodeBinary(LAMBDA_NODE.version),
    client: s3Client({ endpoint: s3Endpoint }),
    s3Endpoint,
    events,
  };
  const runs: CaseRun[] = [];
  try {
    for (const which of cases) {
      const source = caseSource(work, which);
      const archive = execFileSync('tar', ['czf', '-', '-C', source, '.'], { maxBuffer: 256 * MB });
      const expanded = Number(
        execFileSync('sh', ['-c', 'gzip -dc | wc -c'], { input: archive, maxBuffer: MB }).toString(),
      );
      rmSync(source, { recursive: true, force: true });
      for (const asset of which.length % 2 === 0 ? assets : [...assets].reverse()) {
        progress(
          `11. ${which} (${fmt.int(archive.byteLength)} B, ${fmt.mb(expanded)} expanded) on ${asset.name}'s builder`,
        );
        const run = await runCase(harness, asset, which, archive);
        runs.push({ ...run, expandedBytes: expanded });
        progress(
          `11. ${which} on ${asset.name}: ${run.outcome} in ${run.seconds.toFixed(1)} s, peak RSS ${fmt.mb(run.peakRssBytes)}`,
        );
      }
    }
  } finally {
    harness.client.destroy();
    await events.close();
    await servers.stop();
  }
  return report(runs);
}

function report(runs: CaseRun[]): { markdown: string; targets: Target[]; commands: string[] } {
  const mine = runs.filter((run) => run.asset === 'this');
  const targets: Target[] = mine.map((run) => {
    const expected = run.case === 'padded' ? 'published' : 'invalid';
    return {
      name: `Upload builder under aws-lambda-ric, ${run.case} upload`,
      target: `${expected}, peak RSS ≤ half of ${fmt.int(BUILDER_MEMORY_MB)} MB`,
      measured: `${run.outcome}, peak RSS ${fmt.mb(run.peakRssBytes)}, CPU ${run.cpuSeconds.toFixed(1)} s, wall ${run.seconds.toFixed(1)} s`,
      ok: run.outcome === expected && run.peakRssBytes <= (BUILDER_MEMORY_MB * MB) / 2,
    };
  });
  const markdown = table(
    [
      'upload',
      'builder',
      'archive',
      'expanded',
      'outcome',
      'problems',
      'wall s',
      'CPU s',
      'peak RSS',
      'report',
      'event detail',
    ],
    runs.map((run) => [
      run.case,
      run.asset,
      `${fmt.int(run.archiveBytes)} B`,
      fmt.mb(run.expandedBytes),
      run.outcome,
      run.problemCount === null ? '–' : fmt.int(run.problemCount),
      run.seconds.toFixed(1),
      run.cpuSeconds.toFixed(1),
      fmt.mb(run.peakRssBytes),
      `${fmt.int(run.reportBytes)} B`,
      `${fmt.int(run.eventBytes)} B`,
    ]),
  );
  return { markdown: `${markdown}\n`, targets, commands: [] };
}
