/**
 * Measurement script of issue 22 (not part of npm test): two real publisher processes racing into one target
 * (a full rebuild and a one-module edit, both `--retention 0`, started 0–2.5 s apart), then whether the
 * version the pointer names is complete; and what a killed directory publish leaves behind after the next
 * ordinary publish. `npx tsx bench/publisher-race.ts [rounds] [s3 rounds] [s3 modules]`
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startS3 } from '@catalogue/local-aws';
import { s3Client } from '../aws/sdk.js';
import { generateSnapshot, writeSnapshot } from '../builder/synthetic/generate.js';
import { objectIdFor } from '../store/layout.js';
import { DirectoryObjectStore } from '../store/objects/directory.js';
import type { WritableObjectStore } from '../store/objects/interface.js';
import { S3ObjectStore } from '../store/objects/s3.js';
import { parsePointer, parseShard } from '../store/pointer.js';

const ROUNDS = Number(process.argv[2] ?? 4);
/** s3rver stores one object at a time (~14 ms each): fewer rounds of a smaller catalogue there. */
const S3_ROUNDS = Number(process.argv[3] ?? 2);
const MODULES = { directory: 2000, s3: Number(process.argv[4] ?? 600) };
const REPO = new URL('../', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'pub22-'));

function cli(args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'builder/cli.ts', ...args], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c));
  child.stderr!.on('data', (c: Buffer) => (output += c));
  return { child, output: () => output };
}

/** Objects the pointer's version needs that the target lacks or holds damaged. */
async function missing(store: WritableObjectStore, prefix: string): Promise<number> {
  const pointerRead = await store.get(`${prefix}current.json`);
  if (!pointerRead.ok) return -1;
  const pointer = parsePointer(pointerRead.body);
  if (!pointer) return -1;
  let lacking = 0;
  const check = async (id: string) => {
    const read = await store.get(`${prefix}o/${id}`);
    if (!read.ok || objectIdFor(read.body) !== id) lacking++;
    return read;
  };
  for (const shardId of new Set(pointer.shards)) {
    const read = await check(shardId);
    if (!read.ok) continue;
    const entries = parseShard(read.body) as Record<string, string | [string, number, number]> | undefined;
    for (const entry of Object.values(entries ?? {}))
      await check(typeof entry === 'string' ? entry : entry[0]);
  }
  return lacking;
}

async function writeSources(label: string, modules: number) {
  const base = generateSnapshot({ modules, seed: 22 });
  const sources = {
    base: join(work, `${label}-base`),
    full: join(work, `${label}-full`),
    edit: join(work, `${label}-edit`),
  };
  await writeSnapshot(sources.base, base);
  // A full rebuild: a third of the modules re-described (more than the incremental limit).
  await writeSnapshot(sources.full, {
    ...base,
    modules: base.modules.map((m, i) => (i % 3 === 0 ? { ...m, description: `${m.description} (rev)` } : m)),
  });
  // A small edit: one module renamed.
  await writeSnapshot(sources.edit, {
    ...base,
    modules: base.modules.map((m, i) => (i === 7 ? { ...m, name: `${m.name} II` } : m)),
  });
  return sources;
}
const allSources = {
  directory: await writeSources('dir', MODULES.directory),
  s3: await writeSources('s3', MODULES.s3),
};
const sources = allSources.directory;

const s3 = await startS3('pub22');
const client = s3Client({ endpoint: s3.endpoint });
const results: Record<string, unknown>[] = [];
for (const kind of ['directory', 's3'] as const) {
  const rounds = kind === 's3' ? S3_ROUNDS : ROUNDS;
  const sources = allSources[kind];
  for (let round = 0; round < rounds; round++) {
    const prefix = kind === 's3' ? `r${round}/` : '';
    const root = join(work, `dir${round}`);
    const out = kind === 's3' ? `s3://pub22/${prefix.slice(0, -1)}` : root;
    const endpoint = kind === 's3' ? ['--endpoint', s3.endpoint] : [];
    const store =
      kind === 's3' ? new S3ObjectStore({ client, bucket: 'pub22' }) : new DirectoryObjectStore(root);
    const first = cli(['build', '--source', sources.base, '--out', out, ...endpoint]);
    await once(first.child, 'exit');
    const delayMs = Math.round((round / Math.max(1, rounds - 1)) * 2500);
    const full = cli(['build', '--source', sources.full, '--out', out, '--retention', '0', ...endpoint]);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    const edit = cli(['build', '--source', sources.edit, '--out', out, '--retention', '0', ...endpoint]);
    const [[fullCode], [editCode]] = await Promise.all([once(full.child, 'exit'), once(edit.child, 'exit')]);
    const result = {
      kind,
      modules: MODULES[kind],
      round,
      delayMs,
      fullCode,
      editCode,
      missing: await missing(store, prefix),
      messages: [full.output(), edit.output()]
        .map((text) => text.split('\n').find((line) => /another publish|refused|failed/.test(line)))
        .filter(Boolean),
    };
    results.push(result);
    console.log(JSON.stringify(result));
  }
}

// A killed directory publish, then an ordinary publish: what is left behind.
{
  const root = join(work, 'killed');
  const big = join(work, 'big');
  await writeSnapshot(big, generateSnapshot({ modules: 1500, seed: 23 }));
  const first = cli(['build', '--source', sources.base, '--out', root]);
  await once(first.child, 'exit');
  const objects = () => readdirSync(join(root, 'o')).length;
  const baseline = objects();
  const killed = cli(['build', '--source', big, '--out', root, '--concurrency', '4']);
  while (objects() < baseline + 300) await new Promise((resolve) => setTimeout(resolve, 10));
  killed.child.kill('SIGKILL');
  await once(killed.child, 'exit');
  const temporary = () => {
    let count = 0;
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) walk(join(dir, entry.name));
        else if (entry.name.startsWith('.tmp') || dir.endsWith('.tmp-writes')) count++;
      }
    };
    walk(root);
    return count;
  };
  const afterKill = { temporary: temporary(), objects: objects() - baseline };
  const next = cli(['build', '--source', sources.edit, '--out', root]);
  const [code] = await once(next.child, 'exit');
  const pointer = parsePointer(readFileSync(join(root, 'current.json')));
  console.log(
    JSON.stringify({
      killed: afterKill,
      nextPublish: { code, temporary: temporary(), objects: objects(), version: pointer?.version },
      output: next.output().trim().split('\n').slice(-2),
    }),
  );
}
client.destroy();
await s3.dispose();
rmSync(work, { recursive: true, force: true });
process.exit(0);
