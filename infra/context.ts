/**
 * CDK context → stack settings. Each setting of `props.ts` can be given on the command line
 * (`npm run deploy -- -c cataloguePrefix=catalogue/ -c alarmEmail=ops@example.com`) or in `cdk.json`
 * under "context". Values from the command line are strings; booleans and numbers are parsed here.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { PriceClass } from 'aws-cdk-lib/aws-cloudfront';
import type { CatalogueStackProps } from './props.js';

/** Default stack name (`-c stackName=…` deploys a second, independent copy). */
export const DEFAULT_STACK_NAME = 'CatalogueReadApi';

export const STRING_SETTINGS = [
  'cataloguePrefix',
  'domainName',
  'certificateArn',
  'webAclArn',
  'alarmEmail',
  'publisherPrincipalArn',
] as const;
export const BOOLEAN_SETTINGS = ['deletionProtection', 'tracing'] as const;
export const NUMBER_SETTINGS = [
  'memorySize',
  'timeoutSeconds',
  'reservedConcurrency',
  'logRetentionDays',
  'accessLogRetentionDays',
  'keyCacheTtlMs',
  'pointerTtlMs',
  'dependencyTimeoutMs',
  'errorRateThresholdPercent',
  'p99DurationThresholdMs',
  'unauthorizedPerMinuteThreshold',
  'wafRateLimitPer5Min',
  'adminMaxKeysPerOwner',
  'uploadBuilderMemorySize',
  'uploadBuilderTimeoutSeconds',
] as const;

const PRICE_CLASSES: Record<string, PriceClass> = {
  PriceClass_100: PriceClass.PRICE_CLASS_100,
  PriceClass_200: PriceClass.PRICE_CLASS_200,
  PriceClass_All: PriceClass.PRICE_CLASS_ALL,
};
const REMOVAL_POLICIES: Record<string, RemovalPolicy> = {
  retain: RemovalPolicy.RETAIN,
  destroy: RemovalPolicy.DESTROY,
};

export interface AppSettings {
  stackName: string;
  props: CatalogueStackProps;
}

/**
 * Read the stack settings from CDK context (`get` is `app.node.tryGetContext`). Absent keys keep their
 * defaults; an empty string is a value only for `cataloguePrefix` (the bucket root).
 * @example settingsFromContext((k) => ({ tracing: 'true' })[k]).props.tracing === true
 */
export function settingsFromContext(get: (key: string) => unknown): AppSettings {
  const props: Record<string, unknown> = {};
  const text = (key: string): string | undefined => {
    const value = get(key);
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new Error(`context ${key} must be a string, number or boolean`);
    }
    const s = String(value).trim();
    return s === '' && key !== 'cataloguePrefix' ? undefined : s;
  };

  for (const key of STRING_SETTINGS) {
    const value = text(key);
    if (value !== undefined) props[key] = value;
  }
  for (const key of BOOLEAN_SETTINGS) {
    const value = text(key);
    if (value === undefined) continue;
    if (value !== 'true' && value !== 'false')
      throw new Error(`context ${key} must be true or false (got '${value}')`);
    props[key] = value === 'true';
  }
  for (const key of NUMBER_SETTINGS) {
    const value = text(key);
    if (value === undefined) continue;
    const number = Number(value);
    if (!Number.isFinite(number)) throw new Error(`context ${key} must be a number (got '${value}')`);
    props[key] = number;
  }
  const priceClass = text('priceClass');
  if (priceClass !== undefined) {
    const value = PRICE_CLASSES[priceClass];
    if (!value) {
      throw new Error(
        `context priceClass must be one of ${Object.keys(PRICE_CLASSES).join(', ')} (got '${priceClass}')`,
      );
    }
    props.priceClass = value;
  }
  const removalPolicy = text('removalPolicy');
  if (removalPolicy !== undefined) {
    const value = REMOVAL_POLICIES[removalPolicy];
    if (!value) throw new Error(`context removalPolicy must be retain or destroy (got '${removalPolicy}')`);
    props.removalPolicy = value;
  }
  return { stackName: text('stackName') ?? DEFAULT_STACK_NAME, props: props as CatalogueStackProps };
}
