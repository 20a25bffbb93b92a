/**
 * Section 13: the admin function as Lambda runs it, beside an empty function. The synthesized asset
 * (infra/admin.ts, esbuild as `cdk synth` bundles it): its size, by part; spawn → end of the first answer under
 * the official runtime interface client (aws-lambda-ric, against the Runtime API emulator of runtime-api.ts)
 * with Lambda's heap flags, against a handler that answers at once, run the same way, alternating. The first
 * answer is a user area's call: an owner's keys (`GET /v1/keys?owner=…`: the ledger read, the owner index
 * queried, the last uses read) against dynalite in a process of its own, signed with the role's credentials
 * as the stack's function signs them. Node.js 24, the runtime. BENCH_ADMIN_REFERENCE=<directory of another
 * admin asset's index.mjs> (e.g. one synthesized from an older tree) runs it too, in the same alternation.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as actions from '../admin/actions.js';
import { AdminTables } from '../admin/dynamo.js';
import { adminSettings } from '../admin/settings.js';
import { createTables } from '../admin/tables.js';
import { dynamoClient, leanDynamo } from '../aws/sdk.js';
import { FREE_TIER_LIMITS } from '../tables/keys.js';
import { LAMBDA_NODE, nodeBinary } from '../test/helpers/node-release.js';
import { bundledAdmin, synth } from '../test/infra/helpers.js';
import { forkServer } from './children.js';
import { bundleParts } from './function.js';
import { coldRun, LAMBDA_512_FLAGS, RIC_VERSION, runtimeInterfaceClient } from './function-harness.js';
import { progress, type SectionResult, type Target } from './report.js';
import { BENCH_DIR, WORK } from './settings.js';
import { fmt, median, table } from './stats.js';

const TABLES = { keysTable: 'admin-keys', countersTable: 'admin-counters' };
const OWNER = 'bench-owner';
/** The budget of issue 38 (the proxy's), and the cold start it allows beside an empty function. */
const BUDGET_BYTES = 128 * 1024;
const COLD_RATIO = 2;

const summary = (s: number[]) => `${fmt.ms(median(s))} (${fmt.ms(Math.min(...s))}–${fmt.ms(Math.max(...s))})`;

/** The function URL event of a signed `GET /v1/keys?owner=…`, as the function URL passes it. */
function listEvent() {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/v1/keys',
    rawQueryString: `owner=${OWNER}`,
    headers: { host: 'abcdefghij.lambda-url.us-east-1.on.aws' },
    requestContext: {
      http: { method: 'GET', path: '/v1/keys', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1' },
      authorizer: {
        iam: { userArn: 'arn:aws:sts::123456789012:assumed-role/app/bench', accountId: '123456789012' },
      },
    },
    isBase64Encoded: false,
  };
}

/** Tables in dynalite, and an owner with three keys (its ledger, keys and an empty month of counters). */
async function seed(endpoint: string): Promise<void> {
  const client = dynamoClient({ endpoint });
  const dynamo = leanDynamo(endpoint);
  try {
    await createTables(client, TABLES);
    const settings = adminSettings({ KEYS_TABLE: TABLES.keysTable, COUNTERS_TABLE: TABLES.countersTable });
    const ctx = { tables: new AdminTables({ dynamo, ...TABLES }), settings, now: () => new Date() };
    for (let i = 0; i < 3; i++) {
      await actions.issue(ctx, {
        owner: OWNER,
        tier: 'free',
        limits: { ...FREE_TIER_LIMITS },
        label: `app ${i}`,
      });
    }
  } finally {
    client.destroy();
    await dynamo.close();
  }
}

export async function benchAdminFunction(): Promise<SectionResult> {
  const work = join(WORK, 'admin-function');
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const targets: Target[] = [];
  const commands: string[] = [];
  progress('13. synthesizing the stack: the admin asset as `cdk synth` bundles it');
  const asset = bundledAdmin(synth().assemblyDir);
  const parts = await bundleParts(asset.metafile);
  targets.push({
    name: 'Admin function asset (without its source map)',
    target: `≤ ${BUDGET_BYTES / 1024} KB`,
    measured: `${fmt.int(asset.bytes)} B`,
    ok: asset.bytes <= BUDGET_BYTES,
  });
  const lines = [
    `The asset: \`index.mjs\` ${fmt.int(asset.bytes)} B (source map ${fmt.int(asset.mapBytes)} B, not loaded unless a stack trace is printed).`,
    '',
    table(
      ['part', 'bytes', 'share'],
      parts.map((p) => [p.part, fmt.int(p.bytes), `${((100 * p.bytes) / asset.bytes).toFixed(1)} %`]),
    ),
    '',
  ];

  const ric = await runtimeInterfaceClient();
  if (!ric) {
    lines.push('Cold start: aws-lambda-ric could not be installed on this machine; not measured.', '');
    return { markdown: lines.join('\n'), commands, targets };
  }
  const dynamo = await forkServer('dynalite', join(BENCH_DIR, 'servers/dynalite.ts'));
  try {
    const endpoint = String(dynamo.ready.endpoint);
    await seed(endpoint);
    const empty = join(work, 'empty');
    await mkdir(empty);
    await writeFile(
      join(empty, 'index.mjs'),
      "// The reference: a buffered handler that answers at once.\nexport const handler = async () => ({ statusCode: 200, body: '{}' });\n",
    );
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
      AWS_SESSION_TOKEN: 'bench',
      AWS_LAMBDA_FUNCTION_NAME: 'bench-admin',
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
      AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/bench-admin',
      AWS_LAMBDA_LOG_STREAM_NAME: 'bench',
      KEYS_TABLE: TABLES.keysTable,
      COUNTERS_TABLE: TABLES.countersTable,
      AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    };
    const node = nodeBinary(LAMBDA_NODE.version);
    const runs = Number(process.env.BENCH_COLD_RUNS ?? 10);
    const reference = process.env.BENCH_ADMIN_REFERENCE?.trim() || undefined;
    const cold = {
      admin: [] as number[],
      empty: [] as number[],
      reference: [] as number[],
      statuses: [] as number[],
    };
    progress(
      `13. cold start: ${runs} runtime processes each under aws-lambda-ric, the admin function and an empty one`,
    );
    for (let i = 0; i < runs; i++) {
      cold.empty.push((await coldRun(node, ric, empty, env, listEvent())).ms);
      const admin = await coldRun(node, ric, dirname(asset.path), env, listEvent());
      cold.admin.push(admin.ms);
      cold.statuses.push(admin.status);
      if (reference) cold.reference.push((await coldRun(node, ric, reference, env, listEvent())).ms);
    }
    commands.push(
      `<node 24> ${LAMBDA_512_FLAGS.join(' ')} ${join('.work', `ric-${RIC_VERSION}`, 'node_modules/aws-lambda-ric/index.mjs')} index.handler (LAMBDA_TASK_ROOT: the admin asset, or an empty buffered handler; the first event: GET /v1/keys?owner=…)`,
    );
    const ratio = median(cold.admin) / median(cold.empty);
    targets.push({
      name: `Admin function: spawn → first answer under aws-lambda-ric vs an empty function (Node.js ${LAMBDA_NODE.major})`,
      target: `≤ ${COLD_RATIO}×`,
      measured: `${fmt.ms(median(cold.admin))} vs ${fmt.ms(median(cold.empty))} ms (${fmt.x(ratio)})`,
      ok: ratio <= COLD_RATIO && cold.statuses.every((s) => s === 200),
    });
    lines.push(
      `Cold start: spawn of the runtime process → the end of the first answer at the Runtime API emulator, under aws-lambda-ric ${RIC_VERSION} with Lambda's heap flags; the admin function's first answer lists an owner's three keys from dynalite (another process). Medians (min–max) of ${runs} alternating runs, ms.`,
      '',
      table(
        ['runtime', 'empty function', 'the admin function', 'ratio of medians', 'statuses'],
        [
          [
            `Node.js ${LAMBDA_NODE.major}`,
            summary(cold.empty),
            summary(cold.admin),
            fmt.x(ratio),
            cold.statuses.join(' '),
          ],
        ],
      ),
      '',
      ...(reference
        ? [
            `The reference asset (BENCH_ADMIN_REFERENCE) in the same alternation: ${summary(cold.reference)} ms, ${fmt.x(median(cold.reference) / median(cold.empty))} the empty function's.`,
            '',
          ]
        : []),
    );
    return { markdown: lines.join('\n'), commands, targets };
  } finally {
    await dynamo.stop();
  }
}
