/**
 * The reference at `https://<domain>/docs`: the pages and OpenAPI documents that docs/reference/build.ts
 * builds at synth — the API's (`/docs`) and the key-administration API's (`/docs/admin`, documentation only: the
 * admin API stays at its own IAM-authenticated function URL, never behind this distribution) — deployed with
 * the stack to the catalogue bucket under `docs/`, and served by cache behaviours of the distribution straight
 * from S3 (origin access control): no Lambda, cached at the edge, compressed, with the API's security headers
 * and the pages' own Content-Security-Policy. The `/docs/*` behaviour has a small viewer function
 * (docs-request.js) that sends a visitor of a page's folder address (`/docs/`, `/docs/admin/`) to the page and
 * answers a document's CORS preflight; its headers policy adds CORS to the documents (DOCUMENT_CORS).
 *
 * Bucket layout (a page's address and its document's, `/docs` and `/docs/openapi.json`, cannot both be files of
 * one deployment's folder, so the pages and the documents are deployed apart, each behaviour with its own
 * origin path):
 *   docs/page/docs                        ← GET /docs                      (origin path /docs/page)
 *   docs/page/admin/docs/admin            ← GET /docs/admin                (origin path /docs/page/admin)
 *   docs/files/docs/openapi.json          ← GET /docs/openapi.json         (origin path /docs/files, /docs/*)
 *   docs/files/docs/admin/openapi.json    ← GET /docs/admin/openapi.json   (origin path /docs/files, /docs/*)
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Aws, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { type BuiltPage, DOCUMENT_CORS, FILES, PAGES, type ReferenceSite } from '../docs/reference/build.js';
import { globalName, securityHeadersBehavior } from './edge.js';
import { prefixWildcardFinding } from './nag.js';

/** The viewer-request function of the `/docs/*` behaviour (plain JS, tested in test/infra and test/proof). */
export const DOCS_REQUEST_CODE = fileURLToPath(new URL('./docs-request.js', import.meta.url));

/** Where the reference lives in the bucket; the catalogue's prefix may not overlap it (props.ts). */
export const REFERENCE_PREFIX = 'docs/';

/** Browsers revalidate after 5 minutes; the edge keeps it until the next deployment invalidates it. */
const CACHE_CONTROL = 'public, max-age=300';

/** The address every page is under: the API's page, and the folder of the others. */
const ROOT_PAGE = PAGES.api.path;

/**
 * Where a page lives in the bucket: its behaviour's origin path, and its key under `docs/page/` (the key is the
 * origin path's rest and the page's address).
 * @example pageLocation(site.pages.admin) // → { originPath: '/docs/page/admin', key: 'admin/docs/admin' }
 */
function pageLocation(page: BuiltPage): { originPath: string; key: string } {
  const folder = page.path.slice(ROOT_PAGE.length).replace(/^\//, '');
  return {
    originPath: `/${REFERENCE_PREFIX}page${folder ? `/${folder}` : ''}`,
    key: `${folder ? `${folder}/` : ''}${page.path.slice(1)}`,
  };
}

export interface ApiReferenceProps {
  /** The built pages and documents (`buildReferenceSync()`). */
  readonly site: ReferenceSite;
  /** The catalogue bucket (private; only `docs/` is granted to the distribution). */
  readonly bucket: s3.IBucket;
  readonly distribution: cloudfront.Distribution;
  /**
   * Retention of the deployment handler's log group, in days (a `RetentionDays` value).
   * @default 30
   */
  readonly logRetentionDays?: number;
}

/** An S3 origin read through origin access control, whose grant the construct below scopes to `docs/`. */
class ReferenceOrigin extends cloudfront.OriginBase {
  constructor(bucket: s3.IBucket, originAccessControlId: string, originPath: string) {
    super(bucket.bucketRegionalDomainName, { originPath, originAccessControlId });
  }

  protected override renderS3OriginConfig(): cloudfront.CfnDistribution.S3OriginConfigProperty {
    // Origin access control, not an identity: the identity field stays empty.
    return { originAccessIdentity: '' };
  }
}

export class ApiReference extends Construct {
  readonly responseHeaders: cloudfront.ResponseHeadersPolicy;
  /** The `/docs/*` behaviour's (the OpenAPI documents): the same headers, and CORS for browser tools. */
  readonly documentHeaders: cloudfront.ResponseHeadersPolicy;
  readonly originAccessControl: cloudfront.S3OriginAccessControl;
  /** `/docs/` → 301 `/docs`, `/docs/admin/` → 301 `/docs/admin`; every other path of `/docs/*` to S3 unchanged. */
  readonly docsRequest: cloudfront.Function;
  /** Where the deployment handler logs (otherwise CDK makes one that outlives the stack, kept 731 days). */
  readonly deploymentLogs: logs.LogGroup;

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a CDK constructor: the reference bucket, its deployment and its log group declared in order (test/layout/functions.test.ts names it)
  constructor(scope: Construct, id: string, props: ApiReferenceProps) {
    super(scope, id);
    const { bucket, distribution, site } = props;

    // The API's security headers; the CSP is the pages' own (they run inline scripts, allowed by hash).
    this.responseHeaders = new cloudfront.ResponseHeadersPolicy(this, 'SecurityHeaders', {
      responseHeadersPolicyName: globalName(this, 'headers', 128),
      comment: 'Catalogue API reference: the API security headers, with the pages CSP',
      securityHeadersBehavior: securityHeadersBehavior(site.contentSecurityPolicy),
    });

    // The documents also to any origin (DOCUMENT_CORS): browser tools load them by URL. Their preflight is
    // answered by docs-request.js; the policy's headers go on every answer of the behaviour.
    this.documentHeaders = new cloudfront.ResponseHeadersPolicy(this, 'DocumentHeaders', {
      responseHeadersPolicyName: globalName(this, 'documents', 128),
      comment: 'Catalogue API reference: the OpenAPI documents, with CORS for browser tools',
      securityHeadersBehavior: securityHeadersBehavior(site.contentSecurityPolicy),
      corsBehavior: {
        accessControlAllowOrigins: [DOCUMENT_CORS.allowOrigin],
        accessControlAllowMethods: [...DOCUMENT_CORS.allowMethods],
        accessControlAllowHeaders: [...DOCUMENT_CORS.allowHeaders],
        accessControlExposeHeaders: [...DOCUMENT_CORS.exposeHeaders],
        accessControlMaxAge: Duration.seconds(DOCUMENT_CORS.maxAgeSeconds),
        accessControlAllowCredentials: false,
        originOverride: true,
      },
    });

    this.originAccessControl = new cloudfront.S3OriginAccessControl(this, 'OriginAccessControl', {
      originAccessControlName: globalName(this, 'oac', 64),
      signing: cloudfront.Signing.SIGV4_ALWAYS,
    });
    const oacId = this.originAccessControl.originAccessControlId;
    const behaviour: cloudfront.AddBehaviorOptions = {
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
      cachedMethods: cloudfront.CachedMethods.CACHE_GET_HEAD,
      // Public, identical for everyone: cached at the edge (unlike the API), compressed by CloudFront.
      cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
      compress: true,
      responseHeadersPolicy: this.responseHeaders,
    };
    // The pages first, each an exact path (CloudFront takes the first behaviour whose pattern matches).
    const pages = Object.values(site.pages);
    for (const page of pages) {
      distribution.addBehavior(
        page.path,
        new ReferenceOrigin(bucket, oacId, pageLocation(page).originPath),
        behaviour,
      );
    }
    this.docsRequest = new cloudfront.Function(this, 'DocsRequest', {
      comment: 'Catalogue API reference: a page folder address is a permanent redirect to the page',
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromFile({ filePath: DOCS_REQUEST_CODE }),
    });
    distribution.addBehavior(
      `${ROOT_PAGE}/*`,
      new ReferenceOrigin(bucket, oacId, `/${REFERENCE_PREFIX}files`),
      {
        ...behaviour,
        // OPTIONS reaches docs-request.js, which answers a document's preflight; nothing else asks it.
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
        responseHeadersPolicy: this.documentHeaders,
        functionAssociations: [
          { function: this.docsRequest, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST },
        ],
      },
    );

    // Read access for this distribution to docs/ only: the catalogue's objects stay unreachable through it.
    bucket.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'ApiReferenceReadByCloudFront',
        principals: [new iam.ServicePrincipal('cloudfront.amazonaws.com')],
        actions: ['s3:GetObject'],
        resources: [bucket.arnForObjects(`${REFERENCE_PREFIX}*`)],
        conditions: {
          StringEquals: {
            'AWS:SourceArn': `arn:${Aws.PARTITION}:cloudfront::${Aws.ACCOUNT_ID}:distribution/${distribution.distributionId}`,
          },
        },
      }),
    );

    // The handler logs only deployments: nothing to keep once the stack is gone, so it goes with the stack
    // (CloudFormation deletes it after the deployments' last invocation, which depends on it).
    this.deploymentLogs = new logs.LogGroup(this, 'DeploymentLogs', {
      retention: props.logRetentionDays ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Deployed with the stack: the pages in one deployment, the documents in another (each prunes only its own
    // prefix and invalidates its own paths).
    const deploy = (
      name: string,
      what: { files: { key: string; file: string }[]; prefix: string; contentType: string; paths: string[] },
    ) =>
      new s3deploy.BucketDeployment(this, name, {
        sources: what.files.map(({ key, file }) => s3deploy.Source.data(key, readFileSync(file, 'utf8'))),
        destinationBucket: bucket,
        destinationKeyPrefix: what.prefix,
        contentType: what.contentType,
        cacheControl: [s3deploy.CacheControl.fromString(CACHE_CONTROL)],
        distribution,
        distributionPaths: what.paths,
        memoryLimit: 256,
        logGroup: this.deploymentLogs,
      });
    deploy('Page', {
      files: pages.map((page) => ({ key: pageLocation(page).key, file: page.page })),
      prefix: `${REFERENCE_PREFIX}page/`,
      contentType: FILES.page.contentType,
      paths: pages.map((page) => page.path),
    });
    deploy('Files', {
      files: pages.map((page) => ({
        key: page.openapiPath.slice(`${ROOT_PAGE}/`.length),
        file: page.openapi,
      })),
      prefix: `${REFERENCE_PREFIX}files${ROOT_PAGE}/`,
      contentType: FILES.openapi.contentType,
      paths: [`${ROOT_PAGE}/*`],
    });

    this.#acknowledgeDeploymentFindings(bucket);
  }

  /**
   * cdk-nag findings of CDK's deployment handler (one per stack, shared by both deployments). It runs only while
   * CloudFormation deploys the stack, never on a request; its grants are what aws-s3-deployment gives it.
   */
  #acknowledgeDeploymentFindings(bucket: s3.IBucket): void {
    const stack = Stack.of(this);
    const handler = stack.node.children.find((child) =>
      child.node.id.startsWith('Custom::CDKBucketDeployment'),
    );
    if (!handler) throw new Error('the BucketDeployment handler was not found');
    const why = (id: string, reason: string) => Validations.of(handler).acknowledge({ id, reason });
    why(
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      "CDK's BucketDeployment handler logs with the AWS managed basic execution policy (CloudWatch Logs only); it is CDK's own construct and runs only during deployments.",
    );
    const grants =
      'The grants aws-s3-deployment gives its handler: read the staged asset from the CDK assets bucket, write and prune the reference files. It runs only while CloudFormation deploys the stack, and each deployment syncs and prunes only its own prefix under docs/.';
    for (const action of ['s3:GetBucket*', 's3:GetObject*', 's3:List*', 's3:Abort*', 's3:DeleteObject*']) {
      why(`AwsSolutions-IAM5[Action::${action}]`, grants);
    }
    why(
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*]',
      grants,
    );
    why(prefixWildcardFinding(bucket, ''), grants);
    why(
      'AwsSolutions-IAM5[Resource::*]',
      'CloudFront invalidations (cloudfront:CreateInvalidation, GetInvalidation) have no resource-level scoping in the handler aws-s3-deployment creates; it invalidates /docs and /docs/* of this distribution after each deployment.',
    );
    why(
      'AwsSolutions-L1',
      "The runtime of CDK's BucketDeployment handler is chosen by aws-cdk-lib and follows its upgrades; it runs only during deployments.",
    );
  }
}
