/**
 * The check functions as deployed: the bundles of ops/lambda.ts that the stack synthesizes (the scheduled check
 * and the deploy hook, the AWS SDK the runtime's), within their size budget, loaded in a process of their own as
 * Lambda loads them and run once against a real `npm start`, the check key read from a Secrets Manager
 * stand-in: the scheduled run logs one line with every check passed and its metric 1, the hook answers
 * CodeDeploy `Succeeded`; once the stack is stopped, the scheduled run's metric is 0 with the failing checks
 * named, and the hook answers `Failed`.
 */
import { execFile } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../infra/bundling.js';
import { CHECK_NAMES } from '../../ops/checks.js';
import { closeServer, listenOnLoopback } from '../helpers/loopback.js';
import { npmStartSuite, type Started, stop } from '../helpers/npm-start.js';
import { type SecretsManagerStandIn, startSecretsManager } from '../helpers/secrets-manager.js';
import { bundledAsset, type Synthesised, synth } from './helpers.js';

/** A check bundle's budget: it carries the checks, the signer and the builder's version reader, not the SDK. */
const CHECK_BUDGET_BYTES = 128 * 1024;
const SECRET = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:check-key-AbCdEf';

const suite = npmStartSuite('check-bundle', { published: true });
let synthesised: Synthesised;
let started: Started;
let secrets: SecretsManagerStandIn;
const codeDeploy: { target: string; body: Record<string, string> }[] = [];
const deployServer = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    codeDeploy.push({ target: String(request.headers['x-amz-target']), body: JSON.parse(body || '{}') });
    response.writeHead(200).end('{}');
  });
});
let codeDeployEndpoint: string;

beforeAll(async () => {
  synthesised = synth();
  // The bundles leave `@aws-sdk/*` to the runtime: here, the repository's (Lambda's Node.js 24 carries v3).
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(synthesised.assemblyDir, 'node_modules'), 'dir');
  started = await suite.start();
  secrets = await startSecretsManager({ [SECRET]: started.exports.CATALOGUE_KEY! });
  codeDeployEndpoint = `http://127.0.0.1:${await listenOnLoopback(deployServer)}`;
}, 300_000);
afterAll(async () => {
  await secrets?.close();
  await closeServer(deployServer);
  if (started?.child.exitCode === null) await stop(started);
});

/** Run `handler` of the bundle of `fn` with `event`, as Lambda would, in a process of its own; its stdout lines. */
async function runBundle(
  fn: string,
  handler: string,
  event: object,
  env: Record<string, string>,
): Promise<object[]> {
  const script = `
    const module = await import(process.env.BUNDLE);
    await module[process.env.HANDLER](JSON.parse(process.env.EVENT));
  `;
  const exported = started.exports;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--no-warnings', '--input-type=module', '-e', script],
    {
      env: {
        PATH: process.env.PATH,
        BUNDLE: pathToFileURL(bundledAsset(synthesised.assemblyDir, fn).path).href,
        HANDLER: handler,
        EVENT: JSON.stringify(event),
        AWS_REGION: 'us-east-1',
        CHECK_API_URL: exported.CATALOGUE_URL!,
        CHECK_DOCS_URL: `${new URL(exported.CATALOGUE_URL!).origin}/docs`,
        CHECK_ADMIN_URL: exported.CATALOGUE_ADMIN_URL!,
        CHECK_CATALOGUE_URI: 's3://catalogue/',
        CHECK_KEY_SECRET_ARN: SECRET,
        METRICS_NAMESPACE: 'CatalogueReadApi/Local',
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
        AWS_ENDPOINT_URL_S3: exported.CATALOGUE_S3_ENDPOINT!,
        AWS_ENDPOINT_URL_CODEDEPLOY: codeDeployEndpoint,
        AWS_ENDPOINT_URL_CLOUDWATCH: codeDeployEndpoint,
        ...env,
      },
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return stdout
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

const HOOK_EVENT = { DeploymentId: 'd-TEST', LifecycleEventHookExecutionId: 'hook-1' };

describe('the check bundles', () => {
  it.each(['scheduled-check', 'deploy-hook'])(
    '%s: one ESM file with its map, within budget, no SDK inside',
    (fn) => {
      const bundle = bundledAsset(synthesised.assemblyDir, fn);
      const inputs = Object.keys(JSON.parse(readFileSync(bundle.metafile, 'utf8')).inputs);

      expect(bundle.files).toEqual(['index.mjs', 'index.mjs.map']);
      expect(bundle.bytes).toBeLessThanOrEqual(CHECK_BUDGET_BYTES);
      expect(inputs.filter((input) => input.includes('node_modules/@aws-sdk/'))).toEqual([]);
      console.info(`${fn} asset: ${bundle.bytes} bytes`);
    },
  );

  it('the scheduled run passes every check against npm start and logs its metric 1, never the key', async () => {
    const lines = await runBundle('scheduled-check', 'handler', { source: 'aws.events' }, {});
    const line = lines.find((l) => (l as { type?: string }).type === 'scheduled_check') as Record<
      string,
      unknown
    >;

    expect(line, JSON.stringify(lines)).toMatchObject({
      ok: true,
      failed: [],
      ScheduledCheckPassed: 1,
      check: 'public-url',
    });
    expect((line.checks as { name: string; verdict: string }[]).map((c) => [c.name, c.verdict])).toEqual(
      CHECK_NAMES.map((name) => [name, 'pass']),
    );
    expect(JSON.stringify(lines)).not.toContain(started.exports.CATALOGUE_KEY);
    expect(secrets.calls.map((call) => call.operation)).toContain('GetSecretValue');
  });

  it('the deploy hook checks (no bake here) and answers CodeDeploy Succeeded', async () => {
    codeDeploy.length = 0;
    await runBundle('deploy-hook', 'deployHook', HOOK_EVENT, {
      DEPLOY_BAKE_MINUTES: '0',
      DEPLOY_ALARM_NAMES: 'a,b',
    });

    expect(codeDeploy).toEqual([
      {
        target: 'CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus',
        body: { deploymentId: 'd-TEST', lifecycleEventHookExecutionId: 'hook-1', status: 'Succeeded' },
      },
    ]);
  });

  it('once the stack is stopped: metric 0 with the failing checks named, and the hook answers Failed', async () => {
    await stop(started);

    const lines = await runBundle('scheduled-check', 'handler', {}, {});
    codeDeploy.length = 0;
    await runBundle('deploy-hook', 'deployHook', HOOK_EVENT, { DEPLOY_BAKE_MINUTES: '0' });

    const line = lines.find((l) => (l as { type?: string }).type === 'scheduled_check') as Record<
      string,
      unknown
    >;
    expect(line).toMatchObject({ ok: false, ScheduledCheckPassed: 0 });
    expect(line.failed).toEqual(expect.arrayContaining(['edge 401', '200 with ETag', 'live version']));
    expect(codeDeploy.map((call) => call.body.status)).toEqual(['Failed']);
  });
});
