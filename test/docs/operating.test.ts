/**
 * The operator's guide (docs/operating.md) as pasted: the tear-down script run against stand-ins of `aws`
 * and `npx` that record their calls (it reads the stack's outputs first, refuses an empty STACK or a missing
 * output before deleting anything, and deletes by the names it read); the `cdk.json` snippet run on a copy;
 * the settings table against infra/context.ts; the list of what gets deployed against the synthesized
 * template; and every bash block checked by ShellCheck (Debian's `shellcheck`, installed by .ci/run).
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTING_NAMES, settingsFromContext, unknownSettings } from '../../infra/context.js';
import { CatalogueStack, type CatalogueStackProps } from '../../infra/stack.js';
import { cdkJsonContext } from '../infra/helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const GUIDE = readFileSync(join(ROOT, 'docs', 'operating.md'), 'utf8');
const scratch = mkdtempSync(join(tmpdir(), 'cat-operating-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The fenced blocks of `language` in the section under `heading` (or the whole page). */
function blocks(language: string, heading?: string): string[] {
  let text = GUIDE;
  if (heading) {
    const start = GUIDE.indexOf(`\n## ${heading}\n`);
    const end = GUIDE.indexOf('\n## ', start + 1);
    text = GUIDE.slice(start, end === -1 ? undefined : end);
  }
  return [...text.matchAll(new RegExp(`^( *)\`\`\`${language}\\n([\\s\\S]*?)^\\1\`\`\`$`, 'gm'))].map(
    (match) => match[2]!.replace(new RegExp(`^${match[1]}`, 'gm'), ''),
  );
}

const OUTPUTS: Record<string, string> = {
  BucketName: 'teststack-bucket-1',
  AccessLogBucketName: 'teststack-logs-1',
  KeysTableName: 'TestStack-Keys-1',
  CountersTableName: 'TestStack-Counters-1',
  ProxyLogGroupName: '/aws/lambda/TestStack-Proxy-1',
  UploadBuilderLogGroupName: '/aws/lambda/TestStack-Uploads-1',
};

/**
 * A directory with stand-ins for `aws` and `npx`: each appends its arguments to calls.log and answers as the
 * real one would for this stack (describe-stacks: the outputs, or `None` for a key in MISSING; describe-table:
 * deletion protection on; describe-log-groups: one group).
 */
function standIns(): { bin: string; calls: () => string[] } {
  const bin = mkdtempSync(join(scratch, 'bin-'));
  const log = join(bin, 'calls.log');
  const answers = Object.entries(OUTPUTS)
    .map(
      ([key, value]) =>
        `    *"OutputKey=='${key}'"*) [ "\${MISSING:-}" = ${key} ] && echo None || echo '${value}' ;;`,
    )
    .join('\n');
  const aws = `#!/usr/bin/env bash
printf 'aws %s\\n' "$*" >> '${log}'
case "$1 $2" in
  "cloudformation describe-stacks")
    case "$*" in
${answers}
    esac ;;
  "dynamodb describe-table") [[ "$*" == *DeletionProtectionEnabled* ]] && echo True || echo '{}' ;;
  "logs describe-log-groups") echo 1 ;;
esac
exit 0
`;
  writeFileSync(join(bin, 'aws'), aws);
  writeFileSync(
    join(bin, 'npx'),
    `#!/usr/bin/env bash\nprintf 'npx %s (in %s)\\n' "$*" "$(basename "$PWD")" >> '${log}'\n`,
  );
  chmodSync(join(bin, 'aws'), 0o755);
  chmodSync(join(bin, 'npx'), 0o755);
  return {
    bin,
    calls: () => {
      try {
        return readFileSync(log, 'utf8').trim().split('\n');
      } catch {
        return [];
      }
    },
  };
}

async function tearDown(env: Record<string, string>) {
  const [script] = blocks('bash', '8. Tear down');
  const file = join(scratch, 'teardown.sh');
  writeFileSync(file, script!);
  const { bin, calls } = standIns();
  try {
    const { stdout } = await promisify(execFile)('bash', [file], {
      cwd: ROOT,
      env: { PATH: `${bin}:${process.env.PATH}`, ...env },
    });
    return { code: 0, stdout, stderr: '', calls: calls() };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr, calls: calls() };
  }
}

describe('tear down', () => {
  it('reads every output first, destroys the named stack, then deletes what it retained by those names', async () => {
    const run = await tearDown({ STACK: 'TestStack' });

    expect(run.code).toBe(0);
    const described = run.calls.filter((call) => call.startsWith('aws cloudformation describe-stacks'));
    expect(described).toHaveLength(6);
    expect(described.every((call) => call.includes('--stack-name TestStack'))).toBe(true);
    const destroy = run.calls.findIndex((call) => call.startsWith('npx'));
    expect(run.calls[destroy]).toBe('npx cdk destroy --all -c stackName=TestStack (in infra)');
    expect(run.calls.slice(0, destroy).every((call) => call.startsWith('aws cloudformation'))).toBe(true);
    expect(run.calls.slice(destroy + 1)).toEqual([
      'aws s3api head-bucket --bucket teststack-bucket-1',
      'aws s3 rb s3://teststack-bucket-1 --force',
      'aws s3api head-bucket --bucket teststack-logs-1',
      'aws s3 rb s3://teststack-logs-1 --force',
      'aws dynamodb describe-table --table-name TestStack-Keys-1',
      'aws dynamodb describe-table --table-name TestStack-Keys-1 --query Table.DeletionProtectionEnabled --output text',
      'aws dynamodb update-table --table-name TestStack-Keys-1 --no-deletion-protection-enabled',
      'aws dynamodb wait table-exists --table-name TestStack-Keys-1',
      'aws dynamodb delete-table --table-name TestStack-Keys-1',
      'aws dynamodb describe-table --table-name TestStack-Counters-1',
      'aws dynamodb describe-table --table-name TestStack-Counters-1 --query Table.DeletionProtectionEnabled --output text',
      'aws dynamodb update-table --table-name TestStack-Counters-1 --no-deletion-protection-enabled',
      'aws dynamodb wait table-exists --table-name TestStack-Counters-1',
      'aws dynamodb delete-table --table-name TestStack-Counters-1',
      `aws logs describe-log-groups --log-group-name-prefix /aws/lambda/TestStack-Proxy-1 --query length(logGroups[?logGroupName=='/aws/lambda/TestStack-Proxy-1']) --output text`,
      'aws logs delete-log-group --log-group-name /aws/lambda/TestStack-Proxy-1',
      `aws logs describe-log-groups --log-group-name-prefix /aws/lambda/TestStack-Uploads-1 --query length(logGroups[?logGroupName=='/aws/lambda/TestStack-Uploads-1']) --output text`,
      'aws logs delete-log-group --log-group-name /aws/lambda/TestStack-Uploads-1',
    ]);
  });

  it('refuses to run without STACK, before calling anything', async () => {
    for (const env of [{}, { STACK: '' }] as Record<string, string>[]) {
      const run = await tearDown(env);

      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('set STACK to the stack name');
      expect(run.calls).toEqual([]);
    }
  });

  it('stops before destroying or deleting anything when an output is missing', async () => {
    const run = await tearDown({ STACK: 'TestStack', MISSING: 'CountersTableName' });

    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('stack TestStack has no output CountersTableName: nothing deleted');
    expect(run.calls.every((call) => call.startsWith('aws cloudformation describe-stacks'))).toBe(true);
  });
});

describe('restore the keys table', () => {
  it('restores to the point in time into a new table, protects it, and sets keysTableName before deploying', async () => {
    const [script] = blocks('bash', 'Data protection and restore').filter((block) =>
      block.includes('restore-table-to-point-in-time'),
    );
    const work = join(scratch, 'restore');
    mkdirSync(join(work, 'infra'), { recursive: true });
    cpSync(join(ROOT, 'infra', 'cdk.json'), join(work, 'infra', 'cdk.json'));
    writeFileSync(join(work, 'restore.sh'), script!);
    const { bin, calls } = standIns();
    writeFileSync(
      join(bin, 'npm'),
      `#!/usr/bin/env bash\nprintf 'npm %s\\n' "$*" >> '${join(bin, 'calls.log')}'\n`,
    );
    chmodSync(join(bin, 'npm'), 0o755);

    await promisify(execFile)('bash', ['restore.sh'], {
      cwd: work,
      env: { PATH: `${bin}:${process.env.PATH}`, STACK: 'TestStack', WHEN: '2026-11-30T09:00:00Z' },
    });

    const target = 'TestStack-keys-20261130T090000Z';
    expect(calls()).toEqual([
      "aws cloudformation describe-stacks --stack-name TestStack --query Stacks[0].Outputs[?OutputKey=='KeysTableName'].OutputValue | [0] --output text",
      `aws dynamodb restore-table-to-point-in-time --source-table-name TestStack-Keys-1 --target-table-name ${target} --restore-date-time 2026-11-30T09:00:00Z --billing-mode-override PAY_PER_REQUEST`,
      `aws dynamodb wait table-exists --table-name ${target}`,
      `aws dynamodb update-continuous-backups --table-name ${target} --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true`,
      `aws dynamodb update-table --table-name ${target} --deletion-protection-enabled`,
      'npm run deploy',
    ]);
    const { context } = JSON.parse(readFileSync(join(work, 'infra', 'cdk.json'), 'utf8'));
    expect(settingsFromContext((key) => context[key]).props).toEqual({ keysTableName: target });
  });
});

describe('settings', () => {
  it('the cdk.json snippet keeps the settings where every deploy reads them', async () => {
    const [snippet] = blocks('bash', 'Settings kept in `infra/cdk.json`');
    const work = join(scratch, 'cdk');
    mkdirSync(join(work, 'infra'), { recursive: true });
    cpSync(join(ROOT, 'infra', 'cdk.json'), join(work, 'infra', 'cdk.json'));

    await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', snippet!], { cwd: work });

    const { context } = JSON.parse(readFileSync(join(work, 'infra', 'cdk.json'), 'utf8'));
    expect(settingsFromContext((key) => context[key]).props).toEqual({
      alarmEmail: 'ops@example.com',
      reservedConcurrency: 100,
    });
    expect(context['@aws-cdk/core:checkSecretUsage']).toBe(true);
  });

  it('the settings table names every setting the app reads, and cdk.json holds only flags and settings', () => {
    const table = GUIDE.slice(GUIDE.indexOf('| Setting | Default | Meaning |'));
    for (const setting of SETTING_NAMES) expect(table, setting).toContain(`\`${setting}\``);
    const { context } = JSON.parse(readFileSync(join(ROOT, 'infra', 'cdk.json'), 'utf8'));
    expect(unknownSettings(Object.keys(context))).toEqual([]);
  });
});

/** The values the resource table's optional rows are synthesized with. */
const OPTIONAL: CatalogueStackProps = {
  alarmEmail: 'ops@example.com',
  wafRateLimitPer5Min: 2_000,
  countersCapacity: 'provisioned',
};

/** The table under "What gets deployed": type → count in the default stack, and per optional setting. */
function documentedResources(): { base: Map<string, number>; optional: Map<string, Map<string, number>> } {
  const start = GUIDE.indexOf('<!-- resources:');
  const rows = GUIDE.slice(start, GUIDE.indexOf('\n\n', GUIDE.indexOf('| Resource type |', start)));
  const base = new Map<string, number>();
  const optional = new Map<string, Map<string, number>>();
  for (const [, type, count, setting] of rows.matchAll(/^\| `([\w:]+)` \| (\d+)(?: with `(\w+)`)? \|/gm)) {
    if (setting === undefined) base.set(type!, Number(count));
    else {
      if (!optional.has(setting)) optional.set(setting, new Map());
      optional.get(setting)!.set(type!, Number(count));
    }
  }
  return { base, optional };
}

/** The synthesized stack's resources by type (no bundling: the list does not depend on the asset). */
function synthesizedResources(props: CatalogueStackProps): Map<string, string[]> {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const resources = Template.fromStack(new CatalogueStack(app, 'Listed', props)).toJSON().Resources as Record<
    string,
    { Type: string }
  >;
  const byType = new Map<string, string[]>();
  for (const [id, { Type }] of Object.entries(resources)) byType.set(Type, [...(byType.get(Type) ?? []), id]);
  return byType;
}

/** What the table and the template disagree on, naming the resources (empty when they agree). */
function disagreement(documented: Map<string, number>, synthesized: Map<string, string[]>): string[] {
  const types = new Set([...documented.keys(), ...synthesized.keys()]);
  return [...types].sort().flatMap((type) => {
    const listed = documented.get(type) ?? 0;
    const ids = synthesized.get(type) ?? [];
    if (listed === ids.length) return [];
    return [
      ids.length > listed
        ? `${type}: the template has ${ids.length} (${ids.join(', ')}), the guide lists ${listed}: describe the extra in docs/operating.md`
        : `${type}: the guide lists ${listed}, the template has ${ids.length}${ids.length ? ` (${ids.join(', ')})` : ''}: remove or correct the row`,
    ];
  });
}

describe('what gets deployed', () => {
  let byDefault: Map<string, string[]>;
  let withOptions: Map<string, string[]>;
  beforeAll(() => {
    byDefault = synthesizedResources({});
    withOptions = synthesizedResources(OPTIONAL);
  }, 120_000);

  it('the guide lists every resource of the default stack, and says how many', () => {
    const { base } = documentedResources();

    expect(disagreement(base, byDefault)).toEqual([]);
    const total = [...base.values()].reduce((sum, n) => sum + n, 0);
    expect(GUIDE).toContain(
      `**What gets deployed**: ${total} CloudFormation resources with the default settings`,
    );
  });

  it('and what each optional setting adds', () => {
    const { base, optional } = documentedResources();
    expect([...optional.keys()].sort()).toEqual(Object.keys(OPTIONAL).sort());
    const documented = new Map(base);
    for (const rows of optional.values())
      for (const [type, count] of rows) documented.set(type, (documented.get(type) ?? 0) + count);

    expect(disagreement(documented, withOptions)).toEqual([]);
    const total = (rows: Map<string, number>) => [...rows.values()].reduce((sum, n) => sum + n, 0);
    const prose = GUIDE.replace(/\s+/g, ' ');
    for (const [setting, rows] of optional)
      expect(prose).toContain(`${total(base) + total(rows)} with \`${setting}\``);
  });
});

const shellcheck = (() => {
  try {
    execFileSync('shellcheck', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

describe('every bash block', () => {
  it.skipIf(!shellcheck)('passes ShellCheck (apt-get install shellcheck; .ci/run installs it)', () => {
    const all = blocks('bash');
    expect(all.length).toBeGreaterThan(8);
    // The guide's blocks run in one shell, in order: `out` and STACK of step 3 are used by later steps.
    for (const [index, block] of all.entries()) {
      const file = join(scratch, `block-${index}.sh`);
      writeFileSync(file, block.startsWith('#!') ? block : `#!/usr/bin/env bash\n${block}`);
      const run = (() => {
        try {
          return execFileSync('shellcheck', ['--severity=warning', '--exclude=SC2154', file], {
            encoding: 'utf8',
          });
        } catch (error) {
          return (error as { stdout: string }).stdout;
        }
      })();
      expect(run, `block ${index}:\n${block}`).toBe('');
    }
  });
});
