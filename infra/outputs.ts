/**
 * The stack's outputs (docs/operating.md, "3. Read the outputs"): one table, output name → value and
 * description, read from the constructs the stack made; `addOutputs` declares them on the stack. The outputs of
 * what watches the stack and keeps its data are `watch-outputs.ts`'s.
 */
import { Aws, CfnOutput, type Stack } from 'aws-cdk-lib';
import type { AdminApi } from './admin.js';
import type { Dashboard } from './dashboard.js';
import type { Edge } from './edge.js';
import type { ResolvedProps } from './props.js';
import type { ProxyFunction } from './proxy-function.js';
import type { PublisherRole } from './publisher.js';
import type { Storage } from './storage.js';
import { UPLOAD_EVENT_SOURCE, type UploadBuilder } from './upload-builder.js';
import { type Watched, watchOutputs } from './watch-outputs.js';

/** One output: its value and what it is. */
interface Output {
  value: string;
  description: string;
}

/** What the outputs name: the stack's settings and constructs. */
interface Outputted extends Watched {
  region: string;
  settings: ResolvedProps;
  storage: Storage;
  proxy: ProxyFunction;
  edge: Edge;
  publisher: PublisherRole;
  admin: AdminApi;
  uploads: UploadBuilder;
  dashboard: Dashboard;
}

/** Where the API and its reference answer, and what carries them. */
function servingOutputs(stack: Outputted): Record<string, Output> {
  const s = stack.settings;
  const { bucket, keysTable, countersTable, logBucket } = stack.storage;
  const distributionDomain = stack.edge.distribution.distributionDomainName;
  return {
    ApiUrl: {
      value: `https://${s.domainName ?? distributionDomain}/v1`,
      description: 'Base URL of the API (send Authorization: Bearer <key>)',
    },
    ReferenceUrl: {
      value: `https://${s.domainName ?? distributionDomain}/docs`,
      description: 'The API reference page (no key needed; its OpenAPI document at /docs/openapi.json)',
    },
    DistributionDomainName: {
      value: distributionDomain,
      description: 'CloudFront domain name (target of the custom domain CNAME or alias)',
    },
    DistributionId: {
      value: stack.edge.distribution.distributionId,
      description: 'CloudFront distribution id',
    },
    Region: { value: stack.region, description: 'Region of the bucket, tables and Lambda (AWS_REGION)' },
    BucketName: { value: bucket.bucketName, description: 'Bucket of the published catalogue' },
    CataloguePrefix: { value: s.cataloguePrefix, description: 'Key prefix of the published catalogue' },
    CatalogueUri: {
      value: `s3://${bucket.bucketName}/${s.cataloguePrefix}`,
      description: 'Where the builder publishes (npm run catalogue -- build --out <this>)',
    },
    AccessLogBucketName: {
      value: logBucket.bucketName,
      description: 'Bucket of the S3 (s3-access/) and CloudFront (cloudfront/) access logs',
    },
    KeysTableName: { value: keysTable.tableName, description: 'DynamoDB keys table (KEYS_TABLE)' },
    CountersTableName: {
      value: countersTable.tableName,
      description: 'DynamoDB quota counters table (COUNTERS_TABLE)',
    },
  };
}

/** What the publisher's application calls: the publisher role, the admin API and the upload builder. */
function publishingOutputs(stack: Outputted): Record<string, Output> {
  const s = stack.settings;
  const { bucket } = stack.storage;
  return {
    PublisherRoleArn: { value: stack.publisher.role.roleArn, description: 'Role to assume to publish' },
    AdminApiUrl: {
      value: `${stack.admin.functionUrl.url}v1`,
      description: 'Base URL of the key-administration API (SigV4-signed requests, service lambda)',
    },
    AdminCallerPolicyArn: {
      value: stack.admin.callerPolicy.managedPolicyArn,
      description: "Managed policy to attach to the publisher's application's role: call the admin API",
    },
    AdminFunctionName: {
      value: stack.admin.function.functionName,
      description: 'Admin API Lambda function',
    },
    AdminLogGroupName: {
      value: stack.admin.logGroup.logGroupName,
      description: 'Admin API log group: one audit line per call',
    },
    UploadUri: {
      value: `s3://${bucket.bucketName}/${s.incomingPrefix}`,
      description: 'Where to upload a snapshot (<this><name>.tar.gz): it is validated and published',
    },
    ReportsUri: {
      value: `s3://${bucket.bucketName}/${s.reportsPrefix}`,
      description: "Where each upload's report is written (<this><name>.json)",
    },
    UploadPolicyArn: {
      value: stack.uploads.uploadPolicy.managedPolicyArn,
      description:
        "The only permission the publisher's application needs: upload snapshots, read their reports",
    },
    UploadEventPattern: {
      value: JSON.stringify({ source: [UPLOAD_EVENT_SOURCE] }),
      description: "EventBridge pattern of the upload builder's events on the default bus (one per upload)",
    },
    UploadBuilderFunctionName: {
      value: stack.uploads.function.functionName,
      description: 'The upload builder Lambda function',
    },
    UploadBuilderLogGroupName: {
      value: stack.uploads.logGroup.logGroupName,
      description: 'The upload builder log group (progress and one line per upload)',
    },
  };
}

/** The proxy, its deploys, the dashboard, and the web ACL when there is one. */
function runningOutputs(stack: Outputted): Record<string, Output> {
  const { proxy, deploys } = stack;
  const webAcl = stack.edge.webAcl;
  return {
    ProxyFunctionName: { value: proxy.function.functionName, description: 'Proxy Lambda function' },
    ProxyLiveAliasArn: {
      value: proxy.alias.functionArn,
      description: "The proxy's live alias: the version CloudFront reaches (a deploy moves it)",
    },
    ProxyDeploymentApplication: {
      value: deploys.deploymentGroup.application.applicationName,
      description: "CodeDeploy application of the proxy's deploys (aws deploy list-deployments)",
    },
    ProxyDeploymentGroup: {
      value: deploys.deploymentGroup.deploymentGroupName,
      description: "CodeDeploy deployment group of the proxy's deploys: traffic shifting and rollback",
    },
    DashboardUrl: {
      value: `https://console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards/dashboard/${stack.dashboard.dashboard.dashboardName}`,
      description: "The stack's CloudWatch dashboard",
    },
    ProxyLogGroupName: { value: proxy.logGroup.logGroupName, description: 'Proxy Lambda log group' },
    CursorSecretArn: {
      value: proxy.cursorSecret.secretArn,
      description: 'Secrets Manager secret holding the cursor HMAC key (CURSOR_SECRET_ARN of the proxy)',
    },
    ...watchOutputs(stack),
    ...(webAcl && {
      WebAclArn: {
        value: webAcl.attrArn,
        description: 'AWS WAF web ACL of the distribution (rate limit per client IP)',
      },
    }),
  };
}

/** Every output of the stack, in the order the template lists them. */
function stackOutputs(stack: Outputted): Record<string, Output> {
  return { ...servingOutputs(stack), ...publishingOutputs(stack), ...runningOutputs(stack) };
}

/** Declare the stack's outputs on it. */
export function addOutputs(stack: Stack & Outputted): void {
  for (const [name, output] of Object.entries(stackOutputs(stack))) new CfnOutput(stack, name, output);
}
