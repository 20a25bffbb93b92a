/**
 * The public face of the API: a CloudFront distribution in front of the proxy's function URL (origin
 * access control), a viewer-request function (405s, Authorization hand-over) and security headers.
 */
import { fileURLToPath } from 'node:url';
import { Aws, CfnRule, Duration, Fn, Names, Stack, Token, Validations } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

/** The viewer-request function's code (plain JS, unit-tested in test/infra). */
export const VIEWER_REQUEST_CODE = fileURLToPath(new URL('./viewer-request.js', import.meta.url));

/**
 * Every status CloudFront caches by default (for 10 s, whatever `Cache-Control` says: only 404, 410, 414 and
 * 501 honour `no-store`). Each gets an error-caching time of 0 s and no custom page.
 */
export const CACHED_ERROR_STATUSES = [400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504] as const;

/** The security headers of every response; `viewer-request.js` sends the same ones with its 401s and 405s. */
export const SECURITY_HEADERS = {
  hstsMaxAge: Duration.days(365),
  contentSecurityPolicy: "default-src 'none'; frame-ancestors 'none'",
} as const;

/**
 * The security headers of every answer, with `contentSecurityPolicy` (the API's, or the reference page's own).
 * @example securityHeadersBehavior(SECURITY_HEADERS.contentSecurityPolicy)
 */
export function securityHeadersBehavior(
  contentSecurityPolicy: string,
): cloudfront.ResponseSecurityHeadersBehavior {
  return {
    strictTransportSecurity: {
      accessControlMaxAge: SECURITY_HEADERS.hstsMaxAge,
      includeSubdomains: true,
      override: true,
    },
    contentTypeOptions: { override: true },
    frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
    referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: true },
    contentSecurityPolicy: { contentSecurityPolicy, override: true },
  };
}

/**
 * A name for an account-global CloudFront resource (policies, origin access controls) of a regional stack:
 * the region in it lets the same stack name be deployed in two regions (17 characters are kept for the
 * longest region name and its dash).
 * @example globalName(this, 'oac', 64) // → '<region>-<unique id of this construct>-oac'
 */
export function globalName(scope: Construct, suffix: string, maxLength: number): string {
  return Fn.join('-', [
    Aws.REGION,
    Names.uniqueResourceName(scope, { maxLength: maxLength - 17 - suffix.length - 1 }),
    suffix,
  ]);
}

export interface EdgeProps {
  readonly functionUrl: lambda.IFunctionUrl;
  /** Bucket of the CloudFront standard logs (needs ACLs enabled). */
  readonly logBucket: s3.IBucket;
  /**
   * Custom domain name; needs `certificateArn`.
   * @default - the distribution's `*.cloudfront.net` name only
   */
  readonly domainName?: string;
  /**
   * ACM certificate (us-east-1) for `domainName`.
   * @default - none
   */
  readonly certificateArn?: string;
  /**
   * AWS WAF web ACL ARN.
   * @default - none
   */
  readonly webAclArn?: string;
  /**
   * Create a web ACL with a rate-based rule per client IP at this many requests per 5 minutes (us-east-1
   * only; exclusive with `webAclArn`).
   * @default - none
   */
  readonly wafRateLimitPer5Min?: number;
  /**
   * Price class.
   * @default PriceClass.PRICE_CLASS_100
   */
  readonly priceClass?: cloudfront.PriceClass;
}

/** The body of the web ACL's 429: the API's envelope (a web ACL cannot put a per-request id in it). */
export const WAF_RATE_LIMITED_BODY = JSON.stringify({
  error: {
    code: 'rate_limit_exceeded',
    message: 'Too many requests from this address; wait a few minutes before retrying.',
    request_id: 'req_edge_rate_limit',
  },
});

export class Edge extends Construct {
  readonly distribution: cloudfront.Distribution;
  /** The web ACL created for `wafRateLimitPer5Min`. */
  readonly webAcl?: wafv2.CfnWebACL;
  readonly viewerRequest: cloudfront.Function;
  readonly responseHeaders: cloudfront.ResponseHeadersPolicy;

  constructor(scope: Construct, id: string, props: EdgeProps) {
    super(scope, id);

    this.viewerRequest = new cloudfront.Function(this, 'ViewerRequest', {
      comment: 'Catalogue API: 405 for other methods; Authorization travels as x-catalogue-authorization',
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromFile({ filePath: VIEWER_REQUEST_CODE }),
    });

    // No CORS configuration on purpose: keys must not live in browser code (docs/api.md#authentication), so no cross-origin
    // browser access is offered.
    this.responseHeaders = new cloudfront.ResponseHeadersPolicy(this, 'SecurityHeaders', {
      responseHeadersPolicyName: globalName(this, 'headers', 128),
      comment: 'Catalogue API security headers',
      securityHeadersBehavior: securityHeadersBehavior(SECURITY_HEADERS.contentSecurityPolicy),
    });

    // SigV4 on every origin request: the function URL (AWS_IAM) accepts nothing unsigned.
    const originAccessControl = new cloudfront.FunctionUrlOriginAccessControl(this, 'OriginAccessControl', {
      originAccessControlName: globalName(this, 'oac', 64),
      signing: cloudfront.Signing.SIGV4_ALWAYS,
    });

    if (props.wafRateLimitPer5Min !== undefined) this.webAcl = this.#rateLimitAcl(props.wafRateLimitPer5Min);
    const webAclArn = props.webAclArn ?? this.webAcl?.attrArn;

    const certificate =
      props.certificateArn !== undefined
        ? acm.Certificate.fromCertificateArn(this, 'Certificate', props.certificateArn)
        : undefined;

    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Catalogue Read API',
      defaultBehavior: {
        origin: origins.FunctionUrlOrigin.withOriginAccessControl(props.functionUrl, { originAccessControl }),
        // HTTPS only, no redirect: a client that sends its key over plain HTTP should fail loudly and be
        // fixed, not be silently redirected after the key has crossed the network in clear text.
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        // Every method reaches the edge so that the viewer-request function can answer 405 itself.
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        // Every request must reach the proxy to be authenticated and metered, and one key's answer must
        // never be served to another: no caching at CloudFront (ETags still give consumers their 304s).
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        // All viewer headers (x-catalogue-authorization, If-None-Match, Accept-Encoding: with caching disabled
        // CloudFront does not normalise it, so the proxy sees the consumer's q-values) and query strings; not
        // Host, which must be the function URL's own host for the SigV4 signature to match.
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        // The proxy codes its answers itself (br/gzip, an ETag per coding): CloudFront must not code again.
        compress: false,
        responseHeadersPolicy: this.responseHeaders,
        functionAssociations: [
          { function: this.viewerRequest, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST },
        ],
      },
      // Never replay an error. With the default 10 s error caching and a cache key of the path alone, one
      // request's 503 (a single DynamoDB timeout) or 400 would be served for 10 s to every request on that
      // path at that edge, other keys and requests without a key included (which must get 401): outages
      // amplified and authentication skipped. No response page: the proxy's own envelope goes through.
      errorResponses: CACHED_ERROR_STATUSES.map((httpStatus) => ({ httpStatus, ttl: Duration.seconds(0) })),
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: props.priceClass ?? cloudfront.PriceClass.PRICE_CLASS_100,
      enableIpv6: true,
      enableLogging: true,
      logBucket: props.logBucket,
      logFilePrefix: 'cloudfront/',
      logIncludesCookies: false,
      // The minimum TLS version applies to a custom certificate only (see the CFR4 acknowledgement below).
      ...(certificate && props.domainName
        ? {
            certificate,
            domainNames: [props.domainName],
            minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
          }
        : {}),
      ...(webAclArn ? { webAclId: webAclArn } : {}),
    });

    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason:
        'The catalogue is public reference data licensed CC BY 4.0 for use anywhere; access is controlled per API key, not per country.',
    });
    if (!webAclArn) {
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR2',
        reason:
          'Every request is authenticated and metered per key by the proxy (one atomic DynamoDB write, 429 beyond the quota); other methods and requests without a well-formed key are answered by the viewer-request function; a web ACL can be created with wafRateLimitPer5Min or attached with webAclArn when floods become a cost.',
      });
    }
    if (!certificate) {
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR4',
        reason:
          'Without a custom domain the distribution uses the *.cloudfront.net default certificate, whose TLS security policy CloudFront fixes and cannot be raised; TLSv1.2_2021 applies as soon as domainName and certificateArn are set.',
      });
    }
  }

  /**
   * A web ACL (scope CLOUDFRONT) with one rate-based rule per client IP. CloudFront web ACLs can only be
   * created in us-east-1: a stack bound to another region fails here, an environment-agnostic one carries a
   * template rule that stops the deployment anywhere else with the same message.
   */
  #rateLimitAcl(limit: number): wafv2.CfnWebACL {
    const message =
      'wafRateLimitPer5Min creates a CloudFront web ACL, which AWS WAF allows only in us-east-1: deploy this stack in us-east-1, or create the web ACL there and pass its ARN as webAclArn';
    const region = Stack.of(this).region;
    if (!Token.isUnresolved(region) && region !== 'us-east-1')
      throw new Error(`${message} (region ${region})`);
    if (Token.isUnresolved(region)) {
      new CfnRule(this, 'WebAclRegion', {
        assertions: [{ assert: Fn.conditionEquals(Aws.REGION, 'us-east-1'), assertDescription: message }],
      });
    }
    const metricName = (suffix: string) => `${Names.uniqueResourceName(this, { maxLength: 100 })}-${suffix}`;
    return new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      description: 'Catalogue Read API: rate limit per client IP',
      defaultAction: { allow: {} },
      customResponseBodies: {
        RateLimited: { contentType: 'APPLICATION_JSON', content: WAF_RATE_LIMITED_BODY },
      },
      rules: [
        {
          name: 'RateLimitPerIp',
          priority: 0,
          statement: {
            rateBasedStatement: { limit, aggregateKeyType: 'IP', evaluationWindowSec: 300 },
          },
          action: { block: { customResponse: { responseCode: 429, customResponseBodyKey: 'RateLimited' } } },
          visibilityConfig: {
            cloudWatchMetricsEnabled: true,
            metricName: metricName('rate-limit'),
            sampledRequestsEnabled: true,
          },
        },
      ],
      visibilityConfig: {
        cloudWatchMetricsEnabled: true,
        metricName: metricName('web-acl'),
        sampledRequestsEnabled: true,
      },
    });
  }
}
