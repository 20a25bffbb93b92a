/**
 * `npm run bench`: builds, serves and loads a generated catalogue, then writes bench/RESULTS.md.
 * Not part of `npm test`. Quick development run (about a minute or two):
 *   BENCH_MODULES=2000 BENCH_SECONDS=3 BENCH_SOAK_SECONDS=10 npm run bench
 * Every server runs in a child process; all of them are stopped at the end, also when a section fails.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { generateSnapshot, writeSnapshot } from '../builder/synthetic/generate.js';
import { benchAdminFunction } from './admin-function.js';
import { benchBuild } from './build.js';
import { benchBuilderFunction } from './builder-function.js';
import { benchCalls } from './calls.js';
import { killAll } from './children.js';
import { benchCoding } from './coding.js';
import { benchCore, type Shared } from './core.js';
import { benchPeer, type Stack, startStack } from './e2e.js';
import { benchFunction } from './function.js';
import { closeClient } from './http.js';
import { benchLatency } from './latency.js';
import { benchLean } from './lean.js';
import { machineTable } from './machine.js';
import { pickFilters } from './mix.js';
import { benchNpmStart } from './npm-start.js';
import { benchNpmStartPeer } from './npm-start-peer.js';
import { progress, type SectionResult, type Target, verdict } from './report.js';
import { benchScale } from './scale.js';
import { benchEnv, loadSettings, REPO, SECTIONS, type Section, WORK } from './settings.js';
import { benchNpmStartSoak, benchSoak } from './soak.js';
import { fmt, table } from './stats.js';

const TITLES: Record<Section, string> = {
  1: '1. Build',
  2: '2. Proxy core vs the static limit',
  3: '3. End to end vs a dynamic peer (json-server)',
  4: '4. Dependency calls per request, cost per million requests and per month against an always-on deployment',
  5: '5. Memory under sustained load',
  6: '6. Content coding: CPU and bytes per response',
  7: '7. Scale: cold start, pointer and shards, a 100,000-module catalogue',
  8: "8. Hot calls: the request path's lean signed requests vs the AWS SDK",
  9: '9. Latency as on AWS (injected service latencies)',
  10: '10. The Lambda function: asset size, import, cold start, CPU per warm request, memory under a flood',
  11: '11. The upload builder as Lambda runs it: a publish by upload, full and incremental',
  12: "12. npm start: the protocol servers on the proxy's thread vs on their own",
  13: '13. The admin function as Lambda runs it: asset size and cold start beside an empty function',
  14: '14. npm start vs a dynamic peer (fastify + PostgreSQL): the detail path and the full mix',
  15: "15. npm start's memory under sustained load",
};

async function main(): Promise<number> {
  const settings = loadSettings();
  const startedAt = new Date();
  const started = performance.now();
  await mkdir(WORK, { recursive: true });
  const results = new Map<Section, SectionResult | Error>();
  const machine = machineTable();

  progress(`generating a ${settings.modules}-module snapshot (seed ${settings.seed})`);
  const snapshot = generateSnapshot({ modules: settings.modules, seed: settings.seed });
  const snapshotDir = join(WORK, `snapshot-${settings.modules}-${settings.seed}`);
  await rm(snapshotDir, { recursive: true, force: true });
  await writeSnapshot(snapshotDir, snapshot);
  const picks = pickFilters(snapshot);

  const attempt = async (section: Section, run: () => Promise<SectionResult>) => {
    if (!settings.sections.has(section)) return;
    try {
      results.set(section, await run());
    } catch (error) {
      progress(`section ${section} failed: ${(error as Error).stack ?? error}`);
      results.set(section, error as Error);
    }
  };

  /** Servers kept across sections: section 2's proxy core is section 3's reference. */
  const shared: Shared = {};

  /** Sections 3–5, 8 and 9 share one local stack (s3rver + dynalite + the production proxy). */
  const stackSectionList: Section[] = [3, 4, 5, 8, 9];
  async function stackSections() {
    let stack: Stack | undefined;
    const needsStack = stackSectionList.some((s) => settings.sections.has(s));
    try {
      if (needsStack) {
        try {
          stack = await startStack(settings, snapshot, snapshotDir, picks);
        } catch (error) {
          progress(`the local stack did not start: ${(error as Error).stack ?? error}`);
          for (const s of stackSectionList) if (settings.sections.has(s)) results.set(s, error as Error);
        }
      }
      if (stack) {
        const s = stack;
        await attempt(3, () => benchPeer(settings, s, snapshot, picks, shared));
        await attempt(4, () => benchCalls(s, picks));
        await attempt(5, () => benchSoak(settings, s, picks));
        await attempt(8, () => benchLean(s, picks));
        await attempt(9, () => benchLatency(s, picks));
      }
    } finally {
      await stack?.stop();
    }
  }

  await attempt(1, () => benchBuild(settings, snapshot, snapshotDir));
  try {
    await attempt(2, () => benchCore(settings, snapshotDir, picks, shared));
    await stackSections();
  } finally {
    await shared.coreProxy?.stop();
  }
  // After section 2's proxy core has stopped: this one holds the rendered catalogue in memory.
  await attempt(6, () => benchCoding(settings, snapshotDir));
  // Reuses section 1's build of the bench catalogue when it is there.
  await attempt(7, () => benchScale(settings, join(WORK, 'build')));
  await attempt(10, () => benchFunction(settings, snapshot, snapshotDir));
  await attempt(11, () => benchBuilderFunction(settings));
  await attempt(12, () => benchNpmStart(settings, snapshotDir, picks));
  await attempt(13, () => benchAdminFunction());
  await attempt(14, () => benchNpmStartPeer(settings, snapshot, snapshotDir, picks));
  await attempt(15, () => benchNpmStartSoak(settings, snapshotDir, picks));
  closeClient();

  const seconds = (performance.now() - started) / 1000;
  const targets: Target[] = [];
  const sections: string[] = [];
  const commands: string[] = [];
  for (const section of SECTIONS) {
    const result = results.get(section);
    if (!result) {
      sections.push(`## ${TITLES[section]}\n\nNot run (BENCH_SECTIONS).\n`);
      continue;
    }
    if (result instanceof Error) {
      sections.push(`## ${TITLES[section]}\n\n**Failed:** \`${result.message.split('\n')[0]}\`\n`);
      continue;
    }
    targets.push(...result.targets);
    commands.push(...result.commands);
    sections.push(`## ${TITLES[section]}\n\n${result.markdown}`);
  }
  const env = benchEnv();
  const markdown = [
    '# Benchmarks',
    '',
    `Written by \`npm run bench\` (bench/run.ts) on ${startedAt.toISOString().replace('T', ' ').slice(0, 16)} UTC; the whole run took ${fmt.s(seconds / 60)} min. ` +
      'Numbers from one shared machine with other work running (see the load averages): repeated runs are alternated and medians are quoted.',
    '',
    '## Machine',
    '',
    machine,
    '',
    '## How this was run',
    '',
    `\`\`\`sh\n${env ? `${env} ` : ''}npm run bench\n\`\`\``,
    '',
    table(
      ['setting', 'value', 'env'],
      [
        [
          'modules (generateSnapshot, seed)',
          `${fmt.int(settings.modules)} (seed ${settings.seed})`,
          'BENCH_MODULES, BENCH_SEED',
        ],
        [
          'load run / warm-up',
          `${settings.seconds} s / ${settings.warmupSeconds} s`,
          'BENCH_SECONDS, BENCH_WARMUP_SECONDS',
        ],
        ['rounds per server (medians)', settings.rounds, 'BENCH_ROUNDS'],
        [
          'section 2: rounds per server / seconds each',
          `${settings.coreRounds} / ${settings.coreSeconds} s`,
          'BENCH_CORE_ROUNDS, BENCH_CORE_SECONDS',
        ],
        ['large catalogue of section 7', fmt.int(settings.scaleModules), 'BENCH_SCALE_MODULES'],
        ['connections', settings.connections, 'BENCH_CONNECTIONS'],
        [
          'soak / sample interval',
          `${settings.soakSeconds} s / ${settings.soakSampleSeconds} s`,
          'BENCH_SOAK_SECONDS, BENCH_SOAK_SAMPLE_SECONDS',
        ],
        ['npm start soak (section 15)', `${settings.npmSoakSeconds} s`, 'BENCH_NPM_SOAK_SECONDS'],
        ['catalogue in s3rver', settings.s3Publish, 'BENCH_S3_PUBLISH (full|mix)'],
        ['profiling', settings.profile, 'BENCH_PROFILE (auto: where a target is missed)'],
      ],
    ),
    '',
    'Child processes (all on 127.0.0.1, ephemeral ports; the load generator runs in the bench process itself):',
    '',
    ...commands.map((c) => `- \`${c}\``),
    '',
    '## Targets',
    '',
    table(
      ['target', 'goal', 'measured', 'verdict'],
      targets.map((t) => [t.name, t.target, t.measured, verdict(t.ok)]),
    ),
    '',
    ...sections,
  ].join('\n');
  await writeFile(settings.out, `${markdown.replace(/\n{3,}/g, '\n\n').trimEnd()}\n`);
  progress(`wrote ${relative(REPO, settings.out)} in ${fmt.s(seconds)} s`);

  if (!settings.keep) {
    for (const dir of [
      's3',
      'dynamo',
      'build',
      'build-profiled',
      'npm-start',
      'npm-start-twin',
      'npm-start-before',
    ])
      await rm(join(WORK, dir), { recursive: true, force: true });
  }
  const failed = [...results.values()].some((r) => r instanceof Error);
  return failed ? 1 : 0;
}

const stopSignals = () => {
  killAll();
  process.exit(130);
};
process.once('SIGINT', stopSignals);
process.once('SIGTERM', stopSignals);

main().then(
  (code) => {
    killAll();
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    killAll();
    process.exitCode = 1;
  },
);
