/**
 * infra/reference.ts: the reference at https://<domain>/docs (the API's page) and /docs/admin (the key
 * administration API's) is served from the bucket's docs/ prefix by cache behaviours (S3 origins with origin
 * access control, no Lambda, cached, compressed; `/docs/*`, the documents, with the viewer function that sends
 * a page's folder address to the page and answers a document's CORS preflight, infra/docs-request.js), with the
 * API's security headers and the pages' own CSP, the documents with CORS for any origin, deployed with the stack; the distribution can read docs/ and nothing else of the bucket, and routes
 * nothing of the admin API.
 */
import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildReferenceSync,
  DOCUMENT_CORS,
  documentCorsHeaders,
  PAGE_PATHS,
} from '../../docs/reference/build.js';
import { resolveProps } from '../../infra/props.js';
import { DOCS_REQUEST_CODE } from '../../infra/reference.js';
import { distributionArn, expectCloudFrontFunction, logicalId, synth } from './helpers.js';
import { loadDocsRequest } from './viewer-request-code.js';

/** CloudFront's managed CachingOptimized policy. */
const CACHING_OPTIMIZED = '658327ea-f89d-4fab-a63d-7e88639e58f6';

let template: Template;
let distribution: Record<string, unknown>;

beforeAll(() => {
  template = synth().template;
  distribution = Object.values(template.findResources('AWS::CloudFront::Distribution'))[0]!.Properties
    .DistributionConfig;
}, 180_000);

describe('the /docs behaviours', () => {
  it('serve /docs, /docs/admin and /docs/* from S3 through origin access control, cached, with no Lambda', () => {
    const behaviours = distribution.CacheBehaviors as Record<string, unknown>[];
    const policy = logicalId(template, 'AWS::CloudFront::ResponseHeadersPolicy', 'ReferenceSecurityHeaders');
    const origins = distribution.Origins as { Id: string; OriginPath?: string }[];

    expect(behaviours.map((b) => b.PathPattern)).toEqual(['/docs', '/docs/admin', '/docs/*']);
    const docsRequest = logicalId(template, 'AWS::CloudFront::Function', 'ReferenceDocsRequest');
    const documents = logicalId(
      template,
      'AWS::CloudFront::ResponseHeadersPolicy',
      'ReferenceDocumentHeaders',
    );
    // The pages: GET and HEAD; `/docs/*` (the documents): OPTIONS too, for docs-request.js to answer preflights.
    const own = [
      { AllowedMethods: ['GET', 'HEAD'], ResponseHeadersPolicyId: { Ref: policy } },
      { AllowedMethods: ['GET', 'HEAD'], ResponseHeadersPolicyId: { Ref: policy } },
      {
        AllowedMethods: ['GET', 'HEAD', 'OPTIONS'],
        ResponseHeadersPolicyId: { Ref: documents },
        FunctionAssociations: [
          { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [docsRequest, 'FunctionARN'] } },
        ],
      },
    ];
    for (const [index, behaviour] of behaviours.entries()) {
      expect(behaviour).toEqual({
        ...own[index],
        PathPattern: behaviour.PathPattern,
        TargetOriginId: behaviour.TargetOriginId,
        ViewerProtocolPolicy: 'https-only',
        CachedMethods: ['GET', 'HEAD'],
        CachePolicyId: CACHING_OPTIMIZED,
        Compress: true,
      });
    }
    const originOf = (id: unknown) => origins.find((origin) => origin.Id === id);
    expect(originOf(behaviours[0]!.TargetOriginId)?.OriginPath).toBe('/docs/page');
    expect(originOf(behaviours[1]!.TargetOriginId)?.OriginPath).toBe('/docs/page/admin');
    expect(originOf(behaviours[2]!.TargetOriginId)?.OriginPath).toBe('/docs/files');
    const oac = logicalId(template, 'AWS::CloudFront::OriginAccessControl', 'ReferenceOriginAccessControl');
    for (const behaviour of behaviours) {
      expect(originOf(behaviour.TargetOriginId)).toMatchObject({
        DomainName: {
          'Fn::GetAtt': [logicalId(template, 'AWS::S3::Bucket', 'StorageCatalogue'), 'RegionalDomainName'],
        },
        OriginAccessControlId: { 'Fn::GetAtt': [oac, 'Id'] },
        S3OriginConfig: { OriginAccessIdentity: '' },
      });
    }
    template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: Match.objectLike({
        OriginAccessControlOriginType: 's3',
        SigningBehavior: 'always',
        SigningProtocol: 'sigv4',
      }),
    });
  });

  it("send the API's security headers, with the page's own Content-Security-Policy", () => {
    const policies = template.findResources('AWS::CloudFront::ResponseHeadersPolicy');
    const headers = (prefix: string) =>
      policies[logicalId(template, 'AWS::CloudFront::ResponseHeadersPolicy', prefix)]!.Properties
        .ResponseHeadersPolicyConfig.SecurityHeadersConfig;
    const api = headers('EdgeSecurityHeaders');
    const reference = headers('ReferenceSecurityHeaders');

    const { ContentSecurityPolicy: apiCsp, ...apiRest } = api;
    const { ContentSecurityPolicy: referenceCsp, ...referenceRest } = reference;
    expect(referenceRest).toEqual(apiRest);
    expect(referenceCsp).toEqual({
      ContentSecurityPolicy: buildReferenceSync().contentSecurityPolicy,
      Override: true,
    });
    expect(referenceCsp.ContentSecurityPolicy).toMatch(/^default-src 'none'; script-src 'sha256-[^;]+; /);
    expect(apiCsp.ContentSecurityPolicy).toBe("default-src 'none'; frame-ancestors 'none'");
  });
});

describe('the OpenAPI documents', () => {
  it('are open to any origin (CORS, as docs/reference/build.ts says), with the same security headers', () => {
    const policies = template.findResources('AWS::CloudFront::ResponseHeadersPolicy');
    const config = (prefix: string) =>
      policies[logicalId(template, 'AWS::CloudFront::ResponseHeadersPolicy', prefix)]!.Properties
        .ResponseHeadersPolicyConfig;
    const documents = config('ReferenceDocumentHeaders');

    expect(documents.SecurityHeadersConfig).toEqual(config('ReferenceSecurityHeaders').SecurityHeadersConfig);
    expect(documents.CorsConfig).toEqual({
      AccessControlAllowOrigins: { Items: [DOCUMENT_CORS.allowOrigin] },
      AccessControlAllowMethods: { Items: [...DOCUMENT_CORS.allowMethods] },
      AccessControlAllowHeaders: { Items: [...DOCUMENT_CORS.allowHeaders] },
      AccessControlExposeHeaders: { Items: [...DOCUMENT_CORS.exposeHeaders] },
      AccessControlMaxAgeSec: DOCUMENT_CORS.maxAgeSeconds,
      AccessControlAllowCredentials: false,
      OriginOverride: true,
    });
    expect(documents.CorsConfig.AccessControlAllowOrigins.Items).toEqual(['*']);
    // The pages and the API: no CORS.
    expect(config('ReferenceSecurityHeaders').CorsConfig).toBeUndefined();
    expect(config('EdgeSecurityHeaders').CorsConfig).toBeUndefined();
  });

  it("have their preflight answered by docs-request.js with the policy's CORS headers (S3 would refuse it)", () => {
    const docsRequest = loadDocsRequest();
    for (const uri of ['/docs/openapi.json', '/docs/admin/openapi.json']) {
      const answer = docsRequest({
        request: { method: 'OPTIONS', uri, querystring: {}, headers: {}, cookies: {} },
      }) as { statusCode: number; headers: Record<string, { value: string }> };

      expect(answer.statusCode).toBe(204);
      const headers = Object.fromEntries(
        Object.entries(answer.headers).map(([name, { value }]) => [name, value]),
      );
      expect(headers).toMatchObject(documentCorsHeaders(true));
      expect(headers['x-content-type-options']).toBe('nosniff');
    }
    // Any other request of the behaviour goes to S3 untouched: a page's OPTIONS, a document's GET.
    for (const [method, uri] of [
      ['OPTIONS', '/docs/index.html'],
      ['GET', '/docs/openapi.json'],
    ] as const) {
      const request = { method, uri, querystring: {}, headers: {}, cookies: {} };
      expect(docsRequest({ request })).toBe(request);
    }
  });
});

describe('the /docs/* function', () => {
  it('runs infra/docs-request.js on the JS 2.0 runtime, published', () => {
    expectCloudFrontFunction(template, DOCS_REQUEST_CODE);
  });

  it('knows the pages docs/reference/build.ts builds (it is plain JavaScript: it cannot import them)', () => {
    const pages = runInNewContext(`${readFileSync(DOCS_REQUEST_CODE, 'utf8')}\n;PAGES`, {});

    expect([...pages]).toEqual(PAGE_PATHS);
  });
});

describe('the bucket', () => {
  it('lets this distribution read docs/ and nothing else', () => {
    const bucket = logicalId(template, 'AWS::S3::Bucket', 'StorageCatalogue');
    const statements = Object.values(template.findResources('AWS::S3::BucketPolicy'))
      .filter((policy) => (policy.Properties.Bucket as { Ref: string }).Ref === bucket)
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Record<string, unknown>[]);
    const forCloudFront = statements.filter(
      (statement) =>
        JSON.stringify(statement.Principal).includes('cloudfront.amazonaws.com') &&
        statement.Effect === 'Allow',
    );

    expect(forCloudFront).toEqual([
      {
        Sid: 'ApiReferenceReadByCloudFront',
        Effect: 'Allow',
        Principal: { Service: 'cloudfront.amazonaws.com' },
        Action: 's3:GetObject',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, '/docs/*']] },
        Condition: {
          StringEquals: {
            'AWS:SourceArn': distributionArn(
              logicalId(template, 'AWS::CloudFront::Distribution', 'EdgeDistribution'),
            ),
          },
        },
      },
    ]);
  });

  it('gets the pages and the documents with each deployment, each pruning only its own prefix', () => {
    const deployments = Object.values(template.findResources('Custom::CDKBucketDeployment')).map(
      (resource) => resource.Properties,
    );

    expect(
      deployments.map((d) => ({
        prefix: d.DestinationBucketKeyPrefix,
        prune: d.Prune,
        sources: d.SourceObjectKeys.length,
        contentType: d.SystemMetadata['content-type'],
        cacheControl: d.SystemMetadata['cache-control'],
        invalidates: d.DistributionPaths,
      })),
    ).toEqual([
      {
        prefix: 'docs/page/',
        prune: true,
        sources: 2,
        contentType: 'text/html; charset=utf-8',
        cacheControl: 'public, max-age=300',
        invalidates: ['/docs', '/docs/admin'],
      },
      {
        prefix: 'docs/files/docs/',
        prune: true,
        sources: 2,
        contentType: 'application/json; charset=utf-8',
        cacheControl: 'public, max-age=300',
        invalidates: ['/docs/*'],
      },
    ]);
  });

  it('routes nothing to the admin API: its function URL is the origin of no behaviour', () => {
    const origins = distribution.Origins as { Id: string; DomainName: unknown }[];
    const adminUrl = logicalId(template, 'AWS::Lambda::Url', 'Admin');

    expect(JSON.stringify(origins)).not.toContain(adminUrl);
  });

  it('keeps the catalogue out of docs/', () => {
    expect(() => resolveProps({ cataloguePrefix: 'docs/' })).toThrow(
      "cataloguePrefix must not be under docs/, where the API reference is deployed (got 'docs/')",
    );
    expect(() => resolveProps({ cataloguePrefix: 'docs/catalogue/' })).toThrow(/must not be under docs\//);
    expect(() => resolveProps({ cataloguePrefix: 'catalogue/docs/' })).not.toThrow();
  });
});

it('outputs the reference URL', () => {
  template.hasOutput('ReferenceUrl', {
    Value: {
      'Fn::Join': [
        '',
        [
          'https://',
          {
            'Fn::GetAtt': [
              logicalId(template, 'AWS::CloudFront::Distribution', 'EdgeDistribution'),
              'DomainName',
            ],
          },
          '/docs',
        ],
      ],
    },
  });
});
