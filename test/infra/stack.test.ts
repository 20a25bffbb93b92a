/** The stack with its defaults: one synthesis (with the real esbuild bundle) for the whole file. */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { VIEWER_REQUEST_CODE } from '../../infra/edge.js';
import { loadConfig } from '../../proxy/config.js';
import { COUNTERS_SCHEMA, KEYS_SCHEMA } from '../../tables/schema.js';
import {
  allowedActions,
  bundledAdmin,
  bundledProxy,
  distributionArn,
  expectCloudFrontFunction,
  loadViewerRequest,
  logicalId,
  roleStatements,
  type Synthesised,
  synth,
} from './helpers.js';

/**
 * The Lambda asset's size budget (index.mjs, without its source map): half the 256 KB target of issue 21, so
 * growth shows long before the target is at stake (77 KB when the budget was set; 1,104 KB before).
 */
const ASSET_BUDGET_BYTES = 128 * 1024;

/** The packages an asset bundles (from its metafile) and what its module imports when it loads. */
function assetContents(bundle: { metafile: string; path: string }) {
  const meta = JSON.parse(readFileSync(bundle.metafile, 'utf8'));
  const inputs = Object.values(meta.outputs as Record<string, { entryPoint?: string; inputs: object }>).find(
    (output) => output.entryPoint,
  )!.inputs;
  const packages = new Set(
    Object.keys(inputs).flatMap((file) =>
      [...file.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)].map((m) => m[1]),
    ),
  );
  const code = readFileSync(bundle.path, 'utf8');
  const loaded = [...code.matchAll(/(?:^|[;}\s])import\s*(?:[^'"()]*?from\s*)?["']([^"']+)["']/g)].map(
    (m) => m[1],
  );
  return { packages, loaded };
}

let synthesised: Synthesised;
let template: Template;
let ids: Record<
  'bucket' | 'logs' | 'keys' | 'counters' | 'fn' | 'proxyRole' | 'publisherRole' | 'distribution',
  string
>;

beforeAll(() => {
  synthesised = synth();
  template = synthesised.template;
  ids = {
    bucket: logicalId(template, 'AWS::S3::Bucket', 'StorageCatalogue'),
    logs: logicalId(template, 'AWS::S3::Bucket', 'StorageAccessLogs'),
    keys: logicalId(template, 'AWS::DynamoDB::Table', 'StorageKeys'),
    counters: logicalId(template, 'AWS::DynamoDB::Table', 'StorageCounters'),
    fn: logicalId(template, 'AWS::Lambda::Function', 'ProxyFunction'),
    proxyRole: logicalId(template, 'AWS::IAM::Role', 'ProxyRole'),
    publisherRole: logicalId(template, 'AWS::IAM::Role', 'PublisherRole'),
    distribution: logicalId(template, 'AWS::CloudFront::Distribution', 'EdgeDistribution'),
  };
}, 180_000);

const arn = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const objectsUnder = (id: string, prefix: string) => ({ 'Fn::Join': ['', [arn(id), `/${prefix}*`]] });

describe('catalogue bucket', () => {
  it('is private, encrypted, versioned, logged, and retained', () => {
    template.hasResource('AWS::S3::Bucket', {
      Properties: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        VersioningConfiguration: { Status: 'Enabled' },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
        LoggingConfiguration: { DestinationBucketName: { Ref: ids.logs }, LogFilePrefix: 's3-access/' },
      },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    expect(template.toJSON().Resources[ids.bucket].Properties.VersioningConfiguration).toEqual({
      Status: 'Enabled',
    });
  });

  it('aborts incomplete uploads, keeps noncurrent versions 30 days, never expires live objects (the builder collects garbage)', () => {
    const rules = template.toJSON().Resources[ids.bucket].Properties.LifecycleConfiguration.Rules;

    // Only uploaded snapshots and their reports expire (infra/upload-builder.ts), never the catalogue prefix.
    expect(rules).toEqual([
      {
        Id: 'abort-incomplete-uploads',
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        Status: 'Enabled',
      },
      // An overwritten pointer, log or report, or a collected object, stays restorable for 30 days.
      {
        Id: 'expire-noncurrent-versions',
        NoncurrentVersionExpiration: { NoncurrentDays: 30 },
        Status: 'Enabled',
      },
      { Id: 'remove-expired-delete-markers', ExpiredObjectDeleteMarker: true, Status: 'Enabled' },
      { Id: 'expire-uploads', Prefix: 'incoming/', ExpirationInDays: 7, Status: 'Enabled' },
      { Id: 'expire-reports', Prefix: 'reports/', ExpirationInDays: 90, Status: 'Enabled' },
    ]);
  });

  it('denies every request without TLS', () => {
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: ids.bucket },
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: 's3:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            Effect: 'Deny',
            Principal: { AWS: '*' },
            Resource: [arn(ids.bucket), { 'Fn::Join': ['', [arn(ids.bucket), '/*']] }],
          },
        ]),
      },
    });
  });

  it('has an access-log bucket that is private, TLS-only, expiring, and writable by S3 logging', () => {
    template.hasResource('AWS::S3::Bucket', {
      Properties: Match.objectLike({
        PublicAccessBlockConfiguration: Match.objectLike({
          BlockPublicAcls: true,
          RestrictPublicBuckets: true,
        }),
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerPreferred' }] },
        LifecycleConfiguration: {
          Rules: [Match.objectLike({ ExpirationInDays: 90, Status: 'Enabled' })],
        },
      }),
      DeletionPolicy: 'Retain',
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: ids.logs },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Action: 's3:PutObject', Principal: { Service: 'logging.s3.amazonaws.com' } }),
        ]),
      },
    });
  });
});

describe('tables', () => {
  it('keys: on demand, key_hash partition key, key_id-index (ALL), PITR, deletion protection, retained', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: 'key_hash', KeyType: 'HASH' }],
        AttributeDefinitions: Match.arrayWith([
          { AttributeName: 'key_hash', AttributeType: 'S' },
          { AttributeName: 'key_id', AttributeType: 'S' },
        ]),
        GlobalSecondaryIndexes: Match.arrayWith([
          {
            IndexName: 'key_id-index',
            KeySchema: [{ AttributeName: 'key_id', KeyType: 'HASH' }],
            Projection: { ProjectionType: 'ALL' },
          },
        ]),
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
      },
      DeletionPolicy: 'Retain',
    });
  });

  it('counters: on demand, pk partition key, TTL on expires_at, deletion protection, retained', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
        DeletionProtectionEnabled: true,
      },
      DeletionPolicy: 'Retain',
    });
    template.resourceCountIs('AWS::DynamoDB::Table', 2);
  });

  it('declares the schema of the contract both sides import (tables/schema.ts): the key-id and owner indexes', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: KEYS_SCHEMA.partitionKey, KeyType: 'HASH' }],
      GlobalSecondaryIndexes: [
        {
          IndexName: KEYS_SCHEMA.keyIdIndex,
          KeySchema: [{ AttributeName: KEYS_SCHEMA.keyIdAttribute, KeyType: 'HASH' }],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: KEYS_SCHEMA.ownerIndex,
          KeySchema: [
            { AttributeName: KEYS_SCHEMA.ownerAttribute, KeyType: 'HASH' },
            { AttributeName: KEYS_SCHEMA.ownerSortAttribute, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: COUNTERS_SCHEMA.partitionKey, KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: COUNTERS_SCHEMA.ttlAttribute, Enabled: true },
    });
  });
});

describe('proxy Lambda', () => {
  it('runs Node.js 24 on arm64 with 512 MB, a 10 s timeout and its own log group', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'Catalogue Read API proxy: authenticate, meter, stream precomputed objects',
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 512,
      Timeout: 10,
      LoggingConfig: { LogGroup: { Ref: logicalId(template, 'AWS::Logs::LogGroup', 'ProxyLogs') } },
      ReservedConcurrentExecutions: Match.absent(),
      TracingConfig: Match.absent(),
    });
    template.hasResource('AWS::Logs::LogGroup', {
      Properties: { RetentionInDays: 30 },
      DeletionPolicy: 'Retain',
    });
  });

  it('is configured through exactly the environment the proxy reads', () => {
    const variables = template.toJSON().Resources[ids.fn].Properties.Environment.Variables;

    expect(variables).toEqual({
      CATALOGUE_BUCKET: { Ref: ids.bucket },
      CATALOGUE_PREFIX: 'catalogue/',
      KEYS_TABLE: { Ref: ids.keys },
      COUNTERS_TABLE: { Ref: ids.counters },
      KEY_CACHE_TTL_MS: '30000',
      POINTER_TTL_MS: '5000',
      DEPENDENCY_TIMEOUT_MS: '2000',
      // The ARN: the value is read from Secrets Manager at cold start, never kept in the configuration.
      CURSOR_SECRET_ARN: { Ref: logicalId(template, 'AWS::SecretsManager::Secret', 'ProxyCursorSecret') },
      // Read by the log sink (proxy/log/metrics.ts): the request lines' embedded metrics.
      METRICS_NAMESPACE: 'CatalogueReadApi/Catalogue',
    });
    // With the deploy-time values filled in, the proxy's own configuration loader accepts it.
    const deployed = Object.fromEntries(
      Object.entries(variables).map(([name, value]) => [
        name,
        typeof value === 'string'
          ? value
          : name === 'CURSOR_SECRET_ARN'
            ? 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cursor-AbCdEf'
            : 'x'.repeat(64),
      ]),
    );
    expect(JSON.stringify(variables)).not.toContain('resolve:secretsmanager');
    expect(loadConfig(deployed)).toMatchObject({ ok: true });
  });

  it('gets its cursor key from a generated 64-character secret', () => {
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: { PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false },
    });
  });

  it('is bundled by the local esbuild into one minified ESM file with a source map', () => {
    const bundle = bundledProxy(synthesised.assemblyDir);

    expect(bundle.bytes).toBeGreaterThan(1_000);
    expect(bundle.bytes).toBeLessThan(5_000_000);
    expect(bundle.mapBytes).toBeGreaterThan(0);
    const code = readFileSync(bundle.path, 'utf8');
    expect(code).toContain('createRequire');
    expect(code).toMatch(/\/\/# sourceMappingURL=index\.mjs\.map\s*$/);
  });

  it('stays within its size budget, holds only what the function loads, and no package but the signer and the LRU', () => {
    const bundle = bundledProxy(synthesised.assemblyDir);
    // The handler, and its source map (read only under --enable-source-maps, for a crash's trace); esbuild's
    // metafile is written outside the asset (27 KB that Lambda never reads).
    expect(bundle.files).toEqual(['index.mjs', 'index.mjs.map']);
    // What the module imports when it loads: Node.js built-ins only (the AWS SDK is never in the function).
    const { packages, loaded } = assetContents(bundle);

    expect(bundle.bytes).toBeLessThanOrEqual(ASSET_BUDGET_BYTES);
    expect([...packages].sort()).toEqual(['aws4', 'lru-cache']);
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.filter((specifier) => !specifier!.startsWith('node:'))).toEqual([]);
  });

  it('loads as the Lambda runtime loads it and answers a request without a key (no AWS call)', () => {
    // A stand-in for the runtime's `awslambda` global (defined before the handler module is imported),
    // writing the prelude and body the way HttpResponseStream does. A separate process keeps the globals
    // and the environment apart from the tests.
    const script = `
      import { Writable } from 'node:stream';
      globalThis.awslambda = {
        streamifyResponse: (handler) => handler,
        HttpResponseStream: { from(stream, prelude) { process.stdout.write('PRELUDE ' + JSON.stringify(prelude) + '\\n'); return stream; } },
      };
      const { handler } = await import(process.env.BUNDLE);
      const body = [];
      const sink = new Writable({ write(chunk, _encoding, done) { body.push(Buffer.from(chunk)); done(); } });
      await handler({ rawPath: '/v1/modules', rawQueryString: '', headers: {}, requestContext: { http: { method: 'GET' } } }, sink);
      process.stdout.write('BODY ' + Buffer.concat(body).toString() + '\\n');
    `;
    const environment = {
      PATH: process.env.PATH,
      BUNDLE: pathToFileURL(bundledProxy(synthesised.assemblyDir).path).href,
      AWS_REGION: 'eu-west-1',
      CATALOGUE_BUCKET: 'bucket',
      CATALOGUE_PREFIX: 'catalogue/',
      KEYS_TABLE: 'keys',
      COUNTERS_TABLE: 'counters',
      CURSOR_SECRET: 'x'.repeat(64),
    };

    const output = execFileSync(process.execPath, ['--no-warnings', '--input-type=module', '-e', script], {
      env: environment,
      encoding: 'utf8',
      timeout: 20_000,
    });

    // stdout also carries the proxy's own request log line (one JSON object per request).
    const lines = output.trim().split('\n');
    const tagged = (tag: string) =>
      JSON.parse(lines.find((line) => line.startsWith(`${tag} `))!.slice(tag.length + 1));
    expect(tagged('PRELUDE')).toMatchObject({ statusCode: 401 });
    expect(tagged('BODY')).toMatchObject({ error: { code: 'missing_authorization' } });
    const log = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    expect(log).toEqual([expect.objectContaining({ status: 401 })]);
  });
});

describe('proxy Lambda with its cursor secret in Secrets Manager (the bundle as deployed)', () => {
  const script = `
    import { Writable } from 'node:stream';
    globalThis.awslambda = {
      streamifyResponse: (handler) => handler,
      HttpResponseStream: { from(stream, prelude) { process.stdout.write('PRELUDE ' + JSON.stringify(prelude) + '\\n'); return stream; } },
    };
    const { handler } = await import(process.env.BUNDLE);
    for (const authorization of [undefined, 'Bearer pk_live_AAAAAAAAAAAAAAAAAAAAAA']) {
      const body = [];
      const sink = new Writable({ write(chunk, _encoding, done) { body.push(Buffer.from(chunk)); done(); } });
      const headers = authorization ? { 'x-catalogue-authorization': authorization } : {};
      await handler({ rawPath: '/v1/modules', rawQueryString: '', headers, requestContext: { http: { method: 'GET' } } }, sink);
      process.stdout.write('BODY ' + Buffer.concat(body).toString() + '\\n');
    }
  `;

  /** Run the bundle with the deployed environment, Secrets Manager at `endpoint`; its stdout lines. */
  async function runBundle(endpoint: string): Promise<string[]> {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--no-warnings', '--input-type=module', '-e', script],
      {
        env: {
          PATH: process.env.PATH,
          BUNDLE: pathToFileURL(bundledProxy(synthesised.assemblyDir).path).href,
          AWS_REGION: 'eu-west-1',
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoint,
          CATALOGUE_BUCKET: 'bucket',
          CATALOGUE_PREFIX: 'catalogue/',
          KEYS_TABLE: 'keys',
          COUNTERS_TABLE: 'counters',
          CURSOR_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cursor-AbCdEf',
        },
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    return stdout.trim().split('\n');
  }
  const bodies = (lines: string[]) =>
    lines.filter((line) => line.startsWith('BODY ')).map((line) => JSON.parse(line.slice(5)).error?.code);

  it('reads the secret with one lean signed GetSecretValue: no error logged, 401 for no key', async () => {
    const seen: string[] = [];
    const signedBy: string[] = [];
    const server = createServer((request, response) => {
      seen.push(String(request.headers['x-amz-target']));
      signedBy.push(/Credential=([^/]+)\//.exec(String(request.headers.authorization))?.[1] ?? '');
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
        response.end(JSON.stringify({ ARN: 'a', Name: 'cursor', SecretString: 'x'.repeat(64) }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const lines = await runBundle(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);

      expect(seen).toEqual(['secretsmanager.GetSecretValue']);
      // A loopback endpoint gets the fixed local credentials, never the environment's (AWS_ACCESS_KEY_ID=test).
      expect(signedBy).toEqual(['S3RVER']);
      expect(bodies(lines)[0]).toBe('missing_authorization');
      expect(lines.some((line) => line.includes('cursor secret could not be read'))).toBe(false);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('answers 401 first, then 503 configuration_error, when Secrets Manager cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const lines = await runBundle(`http://127.0.0.1:${port}`);

    expect(bodies(lines)).toEqual(['missing_authorization', 'configuration_error']);
    expect(lines.some((line) => line.includes('cursor secret could not be read'))).toBe(true);
  });
});

describe('function URL and origin access control', () => {
  it('accepts only IAM-signed requests and streams responses', () => {
    // The proxy's and the admin API's (below).
    template.resourceCountIs('AWS::Lambda::Url', 2);
    template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'AWS_IAM',
      InvokeMode: 'RESPONSE_STREAM',
      TargetFunctionArn: arn(ids.fn),
    });
  });

  it('lets only this distribution invoke it', () => {
    const sourceArn = distributionArn(ids.distribution);
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission'))
      .map((r) => r.Properties)
      // The upload trigger's, and the schedule's of the scheduled check (test/infra/scheduled-check.test.ts).
      .filter((properties) => !['s3.amazonaws.com', 'events.amazonaws.com'].includes(properties.Principal));

    expect(permissions).toHaveLength(2);
    expect(permissions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Action: 'lambda:InvokeFunctionUrl',
          Principal: 'cloudfront.amazonaws.com',
          SourceArn: sourceArn,
        }),
        expect.objectContaining({
          Action: 'lambda:InvokeFunction',
          Principal: 'cloudfront.amazonaws.com',
          InvokedViaFunctionUrl: true,
          SourceArn: sourceArn,
        }),
      ]),
    );
    for (const permission of permissions) expect(permission.FunctionUrlAuthType).toBeUndefined();
  });

  it('signs every origin request with SigV4 (OAC for Lambda)', () => {
    // The API's, and the reference's for S3 (test/infra/reference.test.ts).
    template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 2);
    template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: {
        Name: {
          'Fn::Join': [
            '-',
            [{ Ref: 'AWS::Region' }, Match.stringLikeRegexp('^CatalogueEdge[0-9A-F]{8}-oac$')],
          ],
        },
        OriginAccessControlOriginType: 'lambda',
        SigningBehavior: 'always',
        SigningProtocol: 'sigv4',
      },
    });
    const oac = logicalId(template, 'AWS::CloudFront::OriginAccessControl', 'EdgeOriginAccessControl');
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Origins: Match.arrayWith([
          Match.objectLike({
            OriginAccessControlId: { 'Fn::GetAtt': [oac, 'Id'] },
            CustomOriginConfig: Match.anyValue(),
          }),
        ]),
      }),
    });
  });

  it('names its account-global CloudFront resources by region, so a second region can reuse the stack name', () => {
    const names = [
      ...Object.values(template.findResources('AWS::CloudFront::Function')).map((r) => r.Properties.Name),
      ...Object.values(template.findResources('AWS::CloudFront::ResponseHeadersPolicy')).map(
        (r) => r.Properties.ResponseHeadersPolicyConfig.Name,
      ),
      ...Object.values(template.findResources('AWS::CloudFront::OriginAccessControl')).map(
        (r) => r.Properties.OriginAccessControlConfig.Name,
      ),
    ];
    // The API's function, headers policy and OAC; the reference's function, two headers policies (the pages',
    // the documents' with CORS) and OAC.
    expect(names).toHaveLength(7);
    for (const name of names) expect(JSON.stringify(name)).toContain('{"Ref":"AWS::Region"}');
  });
});

describe('distribution', () => {
  it('serves HTTPS only, never caches, forwards everything but Host, allows every method', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        HttpVersion: 'http2and3',
        IPV6Enabled: true,
        PriceClass: 'PriceClass_100',
        Aliases: Match.absent(),
        DefaultCacheBehavior: {
          ViewerProtocolPolicy: 'https-only',
          // Managed-CachingDisabled and Managed-AllViewerExceptHostHeader.
          CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
          OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac',
          AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
          Compress: false,
          FunctionAssociations: [
            {
              EventType: 'viewer-request',
              FunctionARN: {
                'Fn::GetAtt': [
                  logicalId(template, 'AWS::CloudFront::Function', 'EdgeViewerRequest'),
                  'FunctionARN',
                ],
              },
            },
          ],
          ResponseHeadersPolicyId: {
            Ref: logicalId(template, 'AWS::CloudFront::ResponseHeadersPolicy', 'EdgeSecurityHeaders'),
          },
          TargetOriginId: Match.anyValue(),
        },
        // The function URL; the reference's S3 origins are in test/infra/reference.test.ts.
        Origins: Match.arrayWith([
          Match.objectLike({
            OriginAccessControlId: Match.anyValue(),
            CustomOriginConfig: { OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] },
          }),
        ]),
        Logging: {
          Bucket: { 'Fn::GetAtt': [ids.logs, 'RegionalDomainName'] },
          IncludeCookies: false,
          Prefix: 'cloudfront/',
        },
      }),
    });
  });

  it('content coding: the consumer’s Accept-Encoding reaches the proxy as sent, and CloudFront never codes again', () => {
    // CachingDisabled has EnableAcceptEncodingGzip/Brotli off, so CloudFront treats Accept-Encoding as an
    // ordinary viewer header (no normalisation), and AllViewerExceptHostHeader forwards every viewer header.
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultCacheBehavior: Match.objectLike({
          CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
          OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac',
          Compress: false,
        }),
      }),
    });
    // The viewer-request function leaves the header alone.
    const request = {
      method: 'GET',
      uri: '/v1/modules',
      querystring: {},
      cookies: {},
      headers: {
        'accept-encoding': { value: 'br;q=0.9, gzip' },
        authorization: { value: `Bearer pk_live_${'A'.repeat(22)}` },
      },
    };
    const forwarded = loadViewerRequest()({ version: '1.0', context: {}, viewer: {}, request }) as {
      headers: Record<string, unknown>;
    };
    expect(forwarded.headers['accept-encoding']).toEqual({ value: 'br;q=0.9, gzip' });
  });

  it('caches no error: 0 s for every status CloudFront would cache, with no response page', () => {
    const config = template.toJSON().Resources[ids.distribution].Properties.DistributionConfig;

    expect(config.CustomErrorResponses).toEqual(
      [400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504].map((ErrorCode) => ({
        ErrorCode,
        ErrorCachingMinTTL: 0,
      })),
    );
  });

  it('runs infra/viewer-request.js on the JS 2.0 runtime', () => {
    expectCloudFrontFunction(template, VIEWER_REQUEST_CODE);
  });

  it('adds security headers and no CORS headers', () => {
    template.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: Match.objectLike({
        SecurityHeadersConfig: {
          StrictTransportSecurity: {
            AccessControlMaxAgeSec: 31_536_000,
            IncludeSubdomains: true,
            Override: true,
          },
          ContentTypeOptions: { Override: true },
          FrameOptions: { FrameOption: 'DENY', Override: true },
          ReferrerPolicy: { ReferrerPolicy: 'no-referrer', Override: true },
          ContentSecurityPolicy: {
            ContentSecurityPolicy: "default-src 'none'; frame-ancestors 'none'",
            Override: true,
          },
        },
        CorsConfig: Match.absent(),
      }),
    });
  });

  it("sends the same security headers with the edge function's own 405", () => {
    const config = Object.values(template.findResources('AWS::CloudFront::ResponseHeadersPolicy'))[0]!
      .Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
    const headers = loadViewerRequest()({
      context: { requestId: 'r' },
      request: { method: 'POST', headers: {} },
    }).headers as Record<string, { value: string }>;

    expect(headers['strict-transport-security']?.value).toBe(
      `max-age=${config.StrictTransportSecurity.AccessControlMaxAgeSec}; includeSubDomains`,
    );
    expect(headers['x-frame-options']?.value).toBe(config.FrameOptions.FrameOption);
    expect(headers['referrer-policy']?.value).toBe(config.ReferrerPolicy.ReferrerPolicy);
    expect(headers['content-security-policy']?.value).toBe(
      config.ContentSecurityPolicy.ContentSecurityPolicy,
    );
  });
});

describe('IAM', () => {
  it('proxy role: read objects under the prefix, list the prefix, get keys, meter counters, write its logs', () => {
    expect(roleStatements(template, ids.proxyRole)).toEqual([
      {
        Sid: 'WriteOwnLogs',
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: arn(logicalId(template, 'AWS::Logs::LogGroup', 'ProxyLogs')),
      },
      {
        Sid: 'ReadPublishedObjects',
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: objectsUnder(ids.bucket, 'catalogue/'),
      },
      {
        Sid: 'ListPublishedObjects',
        Effect: 'Allow',
        Action: 's3:ListBucket',
        Resource: arn(ids.bucket),
        Condition: { StringLike: { 's3:prefix': ['catalogue/*'] } },
      },
      { Sid: 'ReadKeys', Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: arn(ids.keys) },
      {
        Sid: 'ReadCursorSecret',
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: { Ref: logicalId(template, 'AWS::SecretsManager::Secret', 'ProxyCursorSecret') },
      },
      {
        Sid: 'MeterQuota',
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        Resource: arn(ids.counters),
      },
    ]);
  });

  it('proxy role: cannot write objects or keys, scan, query, or use wildcard actions', () => {
    const actions = allowedActions(template, ids.proxyRole);

    for (const forbidden of [
      's3:PutObject',
      's3:DeleteObject',
      'dynamodb:PutItem',
      'dynamodb:Scan',
      'dynamodb:Query',
      'dynamodb:DeleteItem',
    ]) {
      expect(actions).not.toContain(forbidden);
    }
    for (const action of actions) expect(action).not.toContain('*');
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
        ],
      },
      ManagedPolicyArns: Match.absent(),
    });
  });

  it('publisher role: put/get/delete under the prefix and list it, assumable from this account', () => {
    expect(roleStatements(template, ids.publisherRole)).toEqual([
      {
        Sid: 'WriteCatalogueObjects',
        Effect: 'Allow',
        Action: ['s3:DeleteObject', 's3:GetObject', 's3:PutObject'],
        Resource: objectsUnder(ids.bucket, 'catalogue/'),
      },
      {
        Sid: 'ListCatalogueObjects',
        Effect: 'Allow',
        Action: 's3:ListBucket',
        Resource: arn(ids.bucket),
        Condition: { StringLike: { 's3:prefix': ['catalogue/*'] } },
      },
    ]);
    const role = template.toJSON().Resources[ids.publisherRole].Properties;
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: {
          AWS: {
            'Fn::Join': [
              '',
              ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root'],
            ],
          },
        },
      },
    ]);
    expect(role.ManagedPolicyArns).toBeUndefined();
    expect(role.MaxSessionDuration).toBe(3600);
  });

  it('grants nothing else to anyone', () => {
    // The proxy, the publisher, the admin API, CDK's BucketDeployment handler of the reference
    // (test/infra/reference.test.ts), the upload builder and CDK's bucket-notifications handler
    // (test/infra/upload-builder.test.ts), CodeDeploy's service role (test/infra/deploys.test.ts: AWS's
    // managed policy and the hook's invocation), the scheduled check's, its key provider's and the deploy
    // hook's (test/infra/scheduled-check.test.ts, test/infra/deploys.test.ts); the three managed policies are
    // the admin API's caller policy, the publisher's application's upload permission and the read-only smoke
    // check's, attached to nothing by the stack.
    template.resourceCountIs('AWS::IAM::Role', 10);
    template.resourceCountIs('AWS::IAM::Policy', 10);
    template.resourceCountIs('AWS::IAM::ManagedPolicy', 3);
    template.resourceCountIs('AWS::IAM::User', 0);
    for (const managed of Object.values(template.findResources('AWS::IAM::ManagedPolicy'))) {
      expect(
        managed.Properties.Roles ?? managed.Properties.Users ?? managed.Properties.Groups,
      ).toBeUndefined();
    }
  });
});

describe('alarms', () => {
  const alarm = (name: string) =>
    Object.values(template.findResources('AWS::CloudWatch::Alarm')).find(
      (r) => r.Properties.AlarmName === `Catalogue-${name}`,
    )?.Properties;

  it("creates the fifteen alarms (the admin API's, a deploy's four, the upload builder's three and the scheduled check's included), each notifying the alarm topic without any e-mail", () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 15);
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    const topic = { Ref: logicalId(template, 'AWS::SNS::Topic', 'AlarmTopic') };
    for (const properties of Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
      (r) => r.Properties,
    )) {
      expect(properties.AlarmActions).toEqual([topic]);
      // Only the scheduled check counts a run that did not report as a failure.
      const breaching = properties.AlarmName === 'Catalogue-scheduled-check-failed';
      expect(properties.TreatMissingData).toBe(breaching ? 'breaching' : 'notBreaching');
    }
  });

  it('watches the 5xx rate of the function URL', () => {
    const properties = alarm('proxy-5xx-rate');

    expect(properties).toMatchObject({ Threshold: 5, EvaluationPeriods: 2, DatapointsToAlarm: 2 });
    const byId = Object.fromEntries(properties.Metrics.map((m: { Id: string }) => [m.Id, m]));
    expect(byId.errors.MetricStat.Metric).toEqual({
      Namespace: 'AWS/Lambda',
      MetricName: 'Url5xxCount',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: ids.fn } }],
    });
    expect(byId.requests.MetricStat.Metric.MetricName).toBe('UrlRequestCount');
    expect(properties.Metrics.find((m: { Expression?: string }) => m.Expression)?.Expression).toBe(
      '100 * FILL(errors, 0) / requests',
    );
  });

  it('watches Lambda throttles and p99 duration', () => {
    expect(alarm('proxy-throttles')).toMatchObject({
      MetricName: 'Throttles',
      Namespace: 'AWS/Lambda',
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(alarm('proxy-p99-duration')).toMatchObject({
      MetricName: 'Duration',
      ExtendedStatistic: 'p99',
      Threshold: 2000,
      EvaluationPeriods: 3,
    });
  });

  it("watches the admin API's errors: the function's, and its answered 5xx (audit lines of level error)", () => {
    const properties = alarm('admin-errors');

    expect(properties).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
    const byId = Object.fromEntries(properties.Metrics.map((m: { Id: string }) => [m.Id, m]));
    expect(byId.failed.MetricStat).toEqual({
      Metric: {
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [
          {
            Name: 'FunctionName',
            Value: { Ref: logicalId(template, 'AWS::Lambda::Function', 'AdminFunction') },
          },
        ],
      },
      Period: 300,
      Stat: 'Sum',
    });
    expect(byId.answered.MetricStat).toEqual({
      Metric: {
        Namespace: 'CatalogueReadApi/Catalogue',
        MetricName: 'AdminCalls',
        Dimensions: [{ Name: 'level', Value: 'error' }],
      },
      Period: 300,
      Stat: 'Sum',
    });
    expect(properties.Metrics.find((m: { Expression?: string }) => m.Expression)?.Expression).toBe(
      'FILL(failed, 0) + FILL(answered, 0)',
    );
  });

  it.each([
    ['keys', 'keys'],
    ['counters', 'counters'],
  ] as const)('watches throttling of the %s table', (name, table) => {
    const properties = alarm(`${name}-table-throttles`);

    const metrics = properties.Metrics.filter((m: { MetricStat?: unknown }) => m.MetricStat).map(
      (m: { MetricStat: { Metric: { MetricName: string; Dimensions: unknown } } }) => m.MetricStat.Metric,
    );
    expect(metrics.map((m: { MetricName: string }) => m.MetricName).sort()).toEqual([
      'ReadThrottleEvents',
      'WriteThrottleEvents',
    ]);
    for (const metric of metrics)
      expect(metric.Dimensions).toEqual([{ Name: 'TableName', Value: { Ref: ids[table] } }]);
  });
});

describe('flood alarm', () => {
  it('counts the proxy’s 401 log lines with a metric filter and alarms on their rate per minute', () => {
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logicalId(template, 'AWS::Logs::LogGroup', 'ProxyLogs') },
      FilterPattern: '{ $.status = 401 }',
      MetricTransformations: [
        {
          MetricNamespace: 'CatalogueReadApi/Catalogue',
          MetricName: 'ProxyUnauthorized',
          MetricValue: '1',
          Unit: 'Count',
        },
      ],
    });
    const alarm = Object.values(template.findResources('AWS::CloudWatch::Alarm')).find(
      (r) => r.Properties.AlarmName === 'Catalogue-proxy-401-rate',
    )?.Properties;

    expect(alarm).toMatchObject({ Threshold: 600, EvaluationPeriods: 2, DatapointsToAlarm: 2 });
    expect(alarm.Metrics.find((m: { Expression?: string }) => m.Expression)?.Expression).toBe(
      'FILL(unauthorized, 0) / 5',
    );
    const metric = alarm.Metrics.find((m: { Id: string }) => m.Id === 'unauthorized').MetricStat;
    expect(metric).toMatchObject({
      Metric: { Namespace: 'CatalogueReadApi/Catalogue', MetricName: 'ProxyUnauthorized' },
      Period: 300,
      Stat: 'Sum',
    });
  });
});

describe('outputs', () => {
  it.each([
    'ApiUrl',
    'DistributionDomainName',
    'DistributionId',
    'Region',
    'BucketName',
    'CataloguePrefix',
    'CatalogueUri',
    'AccessLogBucketName',
    'KeysTableName',
    'CountersTableName',
    'PublisherRoleArn',
    'ProxyFunctionName',
    'ProxyLogGroupName',
    'CursorSecretArn',
    'AdminApiUrl',
    'AdminCallerPolicyArn',
    'AdminFunctionName',
    'AdminLogGroupName',
  ])('outputs %s', (name) => {
    template.hasOutput(name, { Value: Match.anyValue() });
  });

  it('gives the API URL on the distribution domain, the prefix and the table names', () => {
    template.hasOutput('ApiUrl', {
      Value: { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [ids.distribution, 'DomainName'] }, '/v1']] },
    });
    template.hasOutput('CataloguePrefix', { Value: 'catalogue/' });
    template.hasOutput('KeysTableName', { Value: { Ref: ids.keys } });
    template.hasOutput('CountersTableName', { Value: { Ref: ids.counters } });
    template.hasOutput('PublisherRoleArn', { Value: arn(ids.publisherRole) });
    template.hasOutput('AlarmTopicArn', {
      Value: { Ref: logicalId(template, 'AWS::SNS::Topic', 'AlarmTopic') },
    });
  });
});

describe('key-administration API', () => {
  const adminFn = () => logicalId(template, 'AWS::Lambda::Function', 'AdminFunction');
  const adminRole = () => logicalId(template, 'AWS::IAM::Role', 'AdminRole');

  it('runs its own function, Node.js 24 on arm64, configured with the tables, the cap and the key cache', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('key administration'),
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Role: arn(adminRole()),
      LoggingConfig: { LogGroup: { Ref: logicalId(template, 'AWS::Logs::LogGroup', 'AdminLogs') } },
      Environment: {
        Variables: {
          KEYS_TABLE: { Ref: ids.keys },
          COUNTERS_TABLE: { Ref: ids.counters },
          ADMIN_MAX_KEYS_PER_OWNER: '10',
          KEY_CACHE_TTL_MS: '30000',
        },
      },
    });
  });

  it('is reached through its own function URL with AuthType AWS_IAM, and no route of the distribution leads to it', () => {
    template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'AWS_IAM',
      InvokeMode: 'BUFFERED',
      TargetFunctionArn: arn(adminFn()),
    });
    const adminUrl = logicalId(template, 'AWS::Lambda::Url', 'AdminFunction');
    const distribution = JSON.stringify(template.findResources('AWS::CloudFront::Distribution'));
    expect(distribution).not.toContain(adminUrl);
    expect(distribution).not.toContain(adminFn());
    // Nobody but IAM principals with the caller policy may invoke it: no resource policy opens it.
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission')).filter(
      (permission) => JSON.stringify(permission.Properties.FunctionName).includes(adminFn()),
    );
    expect(permissions).toEqual([]);
  });

  it('has a role that touches only the keys and counters tables: the actions it uses and the two indexes it queries', () => {
    const index = (name: string) => ({ 'Fn::Join': ['', [arn(ids.keys), `/index/${name}`]] });
    expect(roleStatements(template, adminRole())).toEqual([
      {
        Sid: 'WriteOwnLogs',
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: arn(logicalId(template, 'AWS::Logs::LogGroup', 'AdminLogs')),
      },
      {
        Sid: 'ManageKeys',
        Effect: 'Allow',
        Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        Resource: arn(ids.keys),
      },
      {
        Sid: 'FindKeys',
        Effect: 'Allow',
        Action: 'dynamodb:Query',
        Resource: [index(KEYS_SCHEMA.keyIdIndex), index(KEYS_SCHEMA.ownerIndex)],
      },
      {
        Sid: 'UsageIdempotencyAndStops',
        Effect: 'Allow',
        Action: [
          'dynamodb:BatchGetItem',
          'dynamodb:DeleteItem',
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
        ],
        Resource: arn(ids.counters),
      },
    ]);
    const role = template.findResources('AWS::IAM::Role')[adminRole()]!.Properties;
    expect(role.ManagedPolicyArns).toBeUndefined();
    expect(allowedActions(template, adminRole())).not.toContain('dynamodb:DeleteTable');
  });

  it('stays within its size budget, without the AWS SDK: no package but the signer, nothing loaded but Node.js built-ins', () => {
    const bundle = bundledAdmin(synthesised.assemblyDir);
    const { packages, loaded } = assetContents(bundle);

    // Issue 38: at most 128 KB, as the proxy's budget (373 KB with the SDK's DynamoDB client; 54 KB lean).
    expect(bundle.bytes).toBeLessThanOrEqual(ASSET_BUDGET_BYTES);
    expect(bundle.files).toEqual(['index.mjs', 'index.mjs.map']);
    expect([...packages].sort()).toEqual(['aws4']);
    expect(loaded.filter((specifier) => !specifier!.startsWith('node:'))).toEqual([]);
  });

  it('loads as Lambda loads it and answers an event without an IAM caller with 403', () => {
    const bundle = bundledAdmin(synthesised.assemblyDir);
    const script = `
      const { handler } = await import(process.env.BUNDLE);
      const event = { rawPath: '/v1/keys', rawQueryString: 'owner=u1', headers: {}, requestContext: { http: { method: 'GET' } } };
      process.stdout.write('RESULT ' + JSON.stringify(await handler(event)) + '\\n');
    `;
    const output = execFileSync(process.execPath, ['--no-warnings', '--input-type=module', '-e', script], {
      env: {
        PATH: process.env.PATH,
        BUNDLE: pathToFileURL(bundle.path).href,
        AWS_REGION: 'eu-west-1',
        KEYS_TABLE: 'keys',
        COUNTERS_TABLE: 'counters',
      },
      encoding: 'utf8',
      timeout: 20_000,
    });
    const lines = output.trim().split('\n');
    const result = JSON.parse(lines.find((line) => line.startsWith('RESULT '))!.slice(7));
    const audit = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    console.info(`admin function asset: ${bundle.bytes} bytes`);
    expect(result).toMatchObject({ statusCode: 403 });
    expect(JSON.parse(result.body).error.code).toBe('forbidden');
    expect(audit).toEqual([expect.objectContaining({ type: 'admin_audit', status: 403, principal: null })]);
    // Its own asset: the proxy's stays free of the SDK and of key administration.
    expect(readFileSync(bundledProxy(synthesised.assemblyDir).path, 'utf8')).not.toContain('admin_audit');
  });

  it("outputs its URL and the managed policy the publisher's application attaches: invoke this URL, nothing else", () => {
    const policy =
      template.toJSON().Resources[logicalId(template, 'AWS::IAM::ManagedPolicy', 'AdminCallerPolicy')]
        .Properties;
    expect(policy.PolicyDocument.Statement).toEqual([
      {
        Sid: 'InvokeAdminUrl',
        Effect: 'Allow',
        Action: 'lambda:InvokeFunctionUrl',
        Resource: arn(adminFn()),
        Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } },
      },
      {
        Sid: 'InvokeAdminThroughUrl',
        Effect: 'Allow',
        Action: 'lambda:InvokeFunction',
        Resource: arn(adminFn()),
        Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': 'true' } },
      },
    ]);
    template.hasOutput('AdminCallerPolicyArn', {
      Value: { Ref: logicalId(template, 'AWS::IAM::ManagedPolicy', 'AdminCallerPolicy') },
    });
    template.hasOutput('AdminApiUrl', {
      Value: {
        'Fn::Join': [
          '',
          [{ 'Fn::GetAtt': [logicalId(template, 'AWS::Lambda::Url', 'AdminFunction'), 'FunctionUrl'] }, 'v1'],
        ],
      },
    });
  });
});
