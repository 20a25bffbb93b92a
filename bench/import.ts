/**
 * Measurement script of issue 45 (not part of npm test, nor of `npm run bench`): `npm run keys -- import` of a
 * large JSON Lines file of keys already issued — its time, its peak memory, and a run killed (SIGKILL) midway
 * and resumed — against a local DynamoDB (the one `npm start` runs: dynalite, in this process), the CLI in a
 * child process as an operator runs it (tsx admin/cli.ts, what `npm run keys` execs).
 * `npx tsx bench/import.ts [lines] [kill at fraction]` (defaults 100000 and 0.4)
 *
 * The file is what an old system might export: half the keys as themselves, half as their SHA-256, a tenth
 * revoked, a third partner keys with limits, two in five with an owner (one to three keys each), every one with
 * the old system's id. Measured: the dry run; the import; the same file again (imports nothing); then, into
 * fresh tables, a run killed with SIGKILL once it has written about `kill at` of the keys, resumed by running
 * it again: the keys and the owners' ledger entries counted after, each exactly once; then the import again into
 * fresh tables with the heap capped at 64 MiB (what it keeps, as against what its garbage collector leaves).
 * Each run's wall time, peak RSS, and the CPU seconds of the CLI and of the local DynamoDB (on a shared machine
 * the CPU seconds tell more than the wall time).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { startDynamo } from '@catalogue/local-aws';
import { createTables } from '../admin/tables.js';
import { dynamoClient } from '../aws/sdk.js';
import { hashApiKey } from '../tables/keys.js';
import { LAMBDA_NODE, nodeBinary } from '../test/helpers/node-release.js';
import { loadAverage, statusBytes } from './machine.js';

const LINES = Number(process.argv[2] ?? 100_000);
const KILL_AT = Number(process.argv[3] ?? 0.4);
const ROOT = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'import-bench-'));
/** The Node.js `npm run keys` runs on (node_modules/.bin/node): the Lambda functions' release. */
const NODE = nodeBinary(LAMBDA_NODE.version);

const key = () => `pk_live_${randomBytes(17).toString('base64url').slice(0, 22)}`;

/** The old system's export: LINES lines; how many of them count against an owner's cap. */
async function writeExport(path: string): Promise<{ owned: number }> {
  const out = createWriteStream(path);
  let owned = 0;
  let owner = '';
  let left = 0;
  for (let i = 0; i < LINES; i++) {
    const plain = key();
    const revoked = i % 10 === 3;
    const partner = i % 3 === 0;
    if (left === 0 && i % 5 < 2) {
      owner = `user_${i}`;
      left = 1 + (i % 3);
    }
    const line = {
      ...(i % 2 === 0 ? { key: plain } : { key_sha256: hashApiKey(plain) }),
      tier: partner ? 'partner' : 'free',
      ...(partner && { minute: 1200, month: 2_000_000 }),
      ...(left > 0 && { owner }),
      ...(i % 4 === 0 && { label: `customer ${i} — production` }),
      created: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
      ...(revoked && { status: 'revoked' }),
      external_id: i + 1,
    };
    if (left > 0) {
      left--;
      if (!revoked) owned++;
    }
    if (!out.write(`${JSON.stringify(line)}\n`))
      await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
  return { owned };
}

interface Run {
  code: number | null;
  signal: string | null;
  seconds: number;
  peakRssMiB: number;
  /** CPU seconds of the CLI (user + system), and of the local DynamoDB (this process) meanwhile. */
  cliCpu: number;
  dynamoCpu: number;
  stdout: string;
}

/** A live process's CPU seconds (user + system), from /proc/<pid>/stat (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The CLI as `npm run keys` runs it (tsx, on the repository's Node.js), as one process (node with tsx's loader,
 * not tsx's launcher, whose child would outlive a SIGKILL of it): its peak RSS (VmHWM) read from /proc while it
 * runs; `kill` may end it early.
 */
function keys(args: string[], env: NodeJS.ProcessEnv, kill?: (stderr: string) => boolean): Promise<Run> {
  const started = performance.now();
  const child = spawn(NODE, ['--import', 'tsx', 'admin/cli.ts', ...args], { cwd: ROOT, env });
  let stdout = '';
  let stderr = '';
  let peak = 0;
  let cliCpu = 0;
  const before = process.cpuUsage();
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    if (kill?.(stderr)) child.kill('SIGKILL');
  });
  const poll = setInterval(() => {
    try {
      peak = Math.max(peak, statusBytes(child.pid!, 'VmHWM') ?? 0);
      cliCpu = cpuSeconds(child.pid!);
    } catch {
      // exited
    }
  }, 50);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      clearInterval(poll);
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0 && signal === null) console.log(stderr.split('\n').slice(-8).join('\n'));
      const used = process.cpuUsage(before);
      const dynamoCpu = (used.user + used.system) / 1e6;
      resolve({ code, signal, seconds, peakRssMiB: peak / 2 ** 20, cliCpu, dynamoCpu, stdout });
    });
  });
}

/** Key items (and their distinct key ids), and ledger entries, in a keys table. */
async function counted(client: ReturnType<typeof dynamoClient>, table: string) {
  const ids = new Set<string>();
  let items = 0;
  let entries = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: table, ...(start && { ExclusiveStartKey: start as never }) }),
    );
    for (const item of page.Items ?? []) {
      if (item.key_id?.S) {
        items++;
        ids.add(item.key_id.S);
      } else if (item.entries?.S) entries += Object.keys(JSON.parse(item.entries.S) as object).length;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return { items, distinctIds: ids.size, ledgerEntries: entries };
}

const line = (label: string, run: Run) =>
  `${label.padEnd(34)} exit ${run.code ?? run.signal}  ${run.seconds.toFixed(1).padStart(6)} s  peak RSS ${run.peakRssMiB.toFixed(0).padStart(4)} MiB  CPU: CLI ${run.cliCpu.toFixed(1)} s, DynamoDB ${run.dynamoCpu.toFixed(1)} s  load ${loadAverage()}`;

async function main() {
  const file = join(work, 'keys.jsonl');
  const { owned } = await writeExport(file);
  console.log(
    `${LINES.toLocaleString('en-US')} lines, ${(statSync(file).size / 2 ** 20).toFixed(1)} MiB, ${owned.toLocaleString('en-US')} usable keys with an owner; load ${loadAverage()}`,
  );
  const dynamo = await startDynamo();
  const client = dynamoClient({ endpoint: dynamo.endpoint });
  try {
    const envFor = async (suffix: string) => {
      const names = { keysTable: `keys-${suffix}`, countersTable: `counters-${suffix}` };
      await createTables(client, names);
      return {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        KEYS_TABLE: names.keysTable,
        COUNTERS_TABLE: names.countersTable,
        DYNAMODB_ENDPOINT: dynamo.endpoint,
        AWS_REGION: 'us-east-1',
      };
    };
    const whole = await envFor('whole');
    console.log(line('dry run (checks every line)', await keys(['import', file, '--dry-run'], whole)));
    const imported = await keys(['import', file, '--json'], whole);
    console.log(line('import', imported));
    console.log(`  ${JSON.stringify(JSON.parse(imported.stdout).imported)} imported`);
    const again = await keys(['import', file, '--json'], whole);
    console.log(line('the same file again (imports 0)', again));
    console.log(
      `  to_import ${JSON.parse(again.stdout).to_import}, already_there ${JSON.parse(again.stdout).already_there}`,
    );
    console.log(`  table: ${JSON.stringify(await counted(client, whole.KEYS_TABLE))}`);

    const cut = await envFor('cut');
    const killAt = Math.round(LINES * KILL_AT);
    const killed = await keys(['import', file], { ...cut }, (stderr) => {
      const written = [...stderr.matchAll(/imported ([\d,]+) of/g)].at(-1)?.[1];
      return written !== undefined && Number(written.replaceAll(',', '')) >= killAt;
    });
    const before = await counted(client, cut.KEYS_TABLE);
    console.log(line(`killed (SIGKILL) at ~${killAt.toLocaleString('en-US')} written`, killed));
    console.log(`  table after the kill: ${JSON.stringify(before)}`);
    const resumed = await keys(['import', file, '--json'], cut);
    const report = JSON.parse(resumed.stdout);
    console.log(line('resumed (run again)', resumed));
    console.log(
      `  already_there ${report.already_there}, to_import ${report.to_import}, imported ${report.imported}, conflicts ${report.conflict_count}`,
    );
    console.log(
      `  table after: ${JSON.stringify(await counted(client, cut.KEYS_TABLE))} (expected ${LINES} items, ${owned} ledger entries)`,
    );

    // What the import keeps, as against what the garbage collector leaves lying: the same with a heap of 64 MiB.
    const capped = { ...(await envFor('capped')), NODE_OPTIONS: '--max-old-space-size=64' };
    const small = await keys(['import', file, '--json'], capped);
    console.log(line('import, the heap capped at 64 MiB', small));
    console.log(
      `  ${JSON.parse(small.stdout).imported} imported; table: ${JSON.stringify(await counted(client, capped.KEYS_TABLE))}`,
    );
  } finally {
    client.destroy();
    await dynamo.dispose();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
