/** Test helpers: synthesise the stack the way `cdk synth` does (same feature flags), once per file. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { App, RemovalPolicy } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { PriceClass } from 'aws-cdk-lib/aws-cloudfront';
import { metafileSuffix } from '../../infra/bundling.js';
import { CatalogueStack, type CatalogueStackProps } from '../../infra/stack.js';

/** A stack with every optional setting changed from its default. */
export const CERTIFICATE =
  'arn:aws:acm:us-east-1:123456789012:certificate/0f2c4b9e-1111-2222-3333-444455556666';
export const WEB_ACL = 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/catalogue/abcd-1234';
export const PUBLISHER = 'arn:aws:iam::123456789012:role/catalogue-ci';

export const ALL_OPTIONS: CatalogueStackProps = {
  cataloguePrefix: 'data/v1/',
  domainName: 'api.example.com',
  certificateArn: CERTIFICATE,
  webAclArn: WEB_ACL,
  priceClass: PriceClass.PRICE_CLASS_ALL,
  alarmEmail: 'ops@example.com',
  publisherPrincipalArn: PUBLISHER,
  deletionProtection: false,
  removalPolicy: RemovalPolicy.DESTROY,
  memorySize: 1024,
  timeoutSeconds: 15,
  reservedConcurrency: 20,
  logRetentionDays: 90,
  accessLogRetentionDays: 30,
  tracing: true,
  keyCacheTtlMs: 10_000,
  pointerTtlMs: 1_000,
  dependencyTimeoutMs: 3_000,
  errorRateThresholdPercent: 2,
  p99DurationThresholdMs: 1_500,
  unauthorizedPerMinuteThreshold: 120,
  proxyDeployment: 'AllAtOnce',
  countersCapacity: 'provisioned',
  countersMinWriteCapacity: 50,
  countersMaxWriteCapacity: 800,
  proxySystemLogLevel: 'WARN',
};

/** The context of infra/cdk.json (feature flags), so tests see what `npm run synth` produces. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(new URL('../../infra/cdk.json', import.meta.url), 'utf8'));
  return cdkJson.context;
}

/**
 * A new app with the feature flags of cdk.json. CDK's built-in CloudFormation template validation takes
 * seconds to load: it is off here, and test/infra/stack.resource-spec.test.ts runs it on the templates.
 */
export function newApp(options: { bundle?: boolean } = {}): App {
  return new App({
    // `bundle: false` lists no stack in the context the CDK CLI uses to bundle only the stacks it deploys: the
    // template is the same but for the assets' hashes, and synthesis takes a second instead of several.
    context: { ...cdkJsonContext(), ...(options.bundle === false && { 'aws:cdk:bundling-stacks': [] }) },
    builtinCloudFormationValidation: false,
  });
}

export interface Synthesised {
  app: App;
  stack: CatalogueStack;
  template: Template;
  /** Directory of the synthesised cloud assembly. */
  assemblyDir: string;
}

/**
 * Build and synthesise one stack (bundles the three functions with esbuild: a few seconds; `bundle: false`
 * leaves the assets unbuilt, for tests of the template alone).
 */
export function synth(
  props: CatalogueStackProps = {},
  id = 'Catalogue',
  options: { bundle?: boolean } = {},
): Synthesised {
  const app = newApp(options);
  const stack = new CatalogueStack(app, id, props);
  const template = Template.fromStack(stack);
  return { app, stack, template, assemblyDir: app.synth().directory };
}

/** The logical id of the only resource of `type` whose id starts with `prefix`. */
export function logicalId(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1)
    throw new Error(`expected one ${type} named ${prefix}*, found ${ids.join(', ') || 'none'}`);
  return ids[0]!;
}

type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
};

/** The ARN of the distribution `distributionId` (a logical id), as the template joins it for a policy's SourceArn. */
export function distributionArn(distributionId: string) {
  return {
    'Fn::Join': [
      '',
      [
        'arn:',
        { Ref: 'AWS::Partition' },
        ':cloudfront::',
        { Ref: 'AWS::AccountId' },
        ':distribution/',
        { Ref: distributionId },
      ],
    ],
  };
}

/** The template holds a CloudFront Function with `file`'s code, published, on the JS 2.0 runtime. */
export function expectCloudFrontFunction(template: Template, file: string): void {
  template.hasResourceProperties('AWS::CloudFront::Function', {
    AutoPublish: true,
    FunctionCode: readFileSync(file, 'utf8'),
    FunctionConfig: Match.objectLike({ Runtime: 'cloudfront-js-2.0' }),
  });
}

/** The statements of the inline policy attached to the role `roleId`. */
export function roleStatements(template: Template, roleId: string): Statement[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
    (policy.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId),
  );
  if (policies.length !== 1) throw new Error(`expected one policy on ${roleId}, found ${policies.length}`);
  return policies[0]!.Properties.PolicyDocument.Statement;
}

/** Every action a role's inline policy allows. */
export function allowedActions(template: Template, roleId: string): string[] {
  return roleStatements(template, roleId)
    .filter((statement) => statement.Effect === 'Allow')
    .flatMap((statement) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]));
}

/** A bundled Lambda asset in the cloud assembly. */
export interface BundledAsset {
  path: string;
  bytes: number;
  mapBytes: number;
  /** Every file of the asset's directory: what Lambda receives. */
  files: string[];
  /** esbuild's metafile of the bundle, written beside the assembly's files (infra/bundling.ts). */
  metafile: string;
}

/**
 * The asset of function `fn` (infra/bundling.ts names): its metafile beside the assembly gives the size of its
 * index.mjs, and the asset is the one whose index.mjs has that size (the functions' bundles differ by far).
 */
export function bundledAsset(assemblyDir: string, fn: string): BundledAsset {
  const metafiles = readdirSync(assemblyDir).filter((name) => name.endsWith(metafileSuffix(fn)));
  if (metafiles.length !== 1) throw new Error(`expected one *${metafileSuffix(fn)} in ${assemblyDir}`);
  const metafile = join(assemblyDir, metafiles[0]!);
  const outputs = JSON.parse(readFileSync(metafile, 'utf8')).outputs as Record<string, { bytes: number }>;
  const [, output] = Object.entries(outputs).find(([name]) => name.endsWith('index.mjs'))!;
  for (const entry of readdirSync(assemblyDir)) {
    const path = join(assemblyDir, entry, 'index.mjs');
    if (!entry.startsWith('asset.') || !existsSync(path) || statSync(path).size !== output.bytes) continue;
    const map = `${path}.map`;
    return {
      path,
      bytes: statSync(path).size,
      mapBytes: existsSync(map) ? statSync(map).size : 0,
      files: readdirSync(join(assemblyDir, entry)).sort(),
      metafile,
    };
  }
  throw new Error(`no bundled index.mjs of ${fn} (${output.bytes} bytes) under ${assemblyDir}`);
}

/** The bundled proxy (`index.mjs`) in the cloud assembly, with its size. */
export function bundledProxy(assemblyDir: string): BundledAsset {
  return bundledAsset(assemblyDir, 'proxy-function');
}

/** The bundled upload builder (`index.mjs`) in the cloud assembly, with its size. */
export function bundledBuilder(assemblyDir: string): BundledAsset {
  return bundledAsset(assemblyDir, 'upload-builder');
}

/** The bundled admin function (`index.mjs`) in the cloud assembly, with its size. */
export function bundledAdmin(assemblyDir: string): BundledAsset {
  return bundledAsset(assemblyDir, 'admin-function');
}

export { loadViewerRequest } from './viewer-request-code.js';
