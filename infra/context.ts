/**
 * CDK context → stack settings. Each setting of `props.ts` can be given on the command line
 * (`npm run deploy -- -c cataloguePrefix=catalogue/ -c alarmEmail=ops@example.com`) or in `cdk.json`
 * under "context". Values from the command line are strings; booleans and numbers are parsed here. Checked
 * like a CLI's options: a name that is not a setting is refused with the closest one (a misspelt
 * `alarmEmial` would otherwise be ignored and the alarms' e-mail silently dropped), and every problem is one
 * line of a {@link SettingsError}.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { PriceClass } from 'aws-cdk-lib/aws-cloudfront';
import { closestMatch } from 'leven';
import { type CatalogueStackProps, SettingsError } from './props.js';

/** Default stack name (`-c stackName=…` deploys a second, independent copy). */
export const DEFAULT_STACK_NAME = 'CatalogueReadApi';

export const STRING_SETTINGS = [
  'cataloguePrefix',
  'domainName',
  'certificateArn',
  'webAclArn',
  'alarmEmail',
  'publisherPrincipalArn',
  // Checked by props.ts (one of a few names, with the closest one when mistyped).
  'proxyDeployment',
  'countersCapacity',
  'proxySystemLogLevel',
  'runbookUrl',
  'keysTableName',
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
  'countersMinWriteCapacity',
  'countersMaxWriteCapacity',
  'scheduledCheckMinutes',
  'checkKeyGeneration',
  'edge4xxRateThresholdPercent',
  'newVersion4xxIncreasePercent',
  'deployBakeMinutes',
  'noncurrentVersionDays',
  'adminLogRetentionDays',
] as const;

/** Settings whose value is one of a few names. */
export const CHOICE_SETTINGS = ['priceClass', 'removalPolicy'] as const;

/** Every context name this app reads: the table a new setting is added to (through the lists above). */
export const SETTING_NAMES: readonly string[] = [
  'stackName',
  ...STRING_SETTINGS,
  ...BOOLEAN_SETTINGS,
  ...NUMBER_SETTINGS,
  ...CHOICE_SETTINGS,
];

/**
 * CDK's own context, passed to every app and never a setting of this one: feature flags (`@aws-cdk/…`), the
 * CLI's (`aws:cdk:…`), cached lookups (`availability-zones:account=…`): all hold `:` or begin with `@`;
 * and the CLI's record of acknowledged notices.
 */
function isCdkContext(name: string): boolean {
  return name.includes(':') || name.startsWith('@') || name === 'acknowledged-issue-numbers';
}

/** Letter case, `-` and `_` do not tell setting names apart (`alarm-email` is `alarmEmail`). */
const plain = (name: string) => name.toLowerCase().replace(/[-_]/g, '');

/**
 * The setting a name that is not one was probably meant to be: letter case, `-` and `_` aside, within two
 * edits (a third of its letters for long names), by `leven`'s edit distance.
 * @example closestSetting('alarmEmial') // → 'alarmEmail'
 */
export function closestSetting(name: string): string | undefined {
  const byPlain = new Map(SETTING_NAMES.map((setting) => [plain(setting), setting]));
  const target = plain(name);
  const match = closestMatch(target, [...byPlain.keys()], {
    maxDistance: Math.max(2, Math.floor(target.length / 3)),
  });
  return match === undefined ? undefined : byPlain.get(match);
}

/**
 * A problem for each context name that is neither a setting of this app nor CDK's own.
 * @example unknownSettings(['alarmEmial', '@aws-cdk/core:checkSecretUsage'])
 *   // → ["unknown setting 'alarmEmial' (-c alarmEmial=…): did you mean alarmEmail?"]
 */
export function unknownSettings(names: readonly string[]): string[] {
  return names
    .filter((name) => !isCdkContext(name) && !SETTING_NAMES.includes(name))
    .map((name) => {
      const meant = closestSetting(name);
      return `unknown setting '${name}' (-c ${name}=…): ${
        meant ? `did you mean ${meant}?` : 'the settings are listed in docs/operating.md'
      }`;
    });
}

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
 * defaults; an empty string is a value only for `cataloguePrefix` (the bucket root). With `names` (every
 * context name the app was given), a name that is not a setting is refused too. Throws a
 * {@link SettingsError} with every problem found, one line each.
 * @example settingsFromContext((k) => ({ tracing: 'true' })[k]).props.tracing === true
 */
export function settingsFromContext(
  get: (key: string) => unknown,
  names: readonly string[] = [],
): AppSettings {
  const problems = unknownSettings(names);
  const props: Record<string, unknown> = {};
  const text = (key: string): string | undefined => {
    const value = get(key);
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      problems.push(`context ${key} must be a string, number or boolean`);
      return undefined;
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
      problems.push(`context ${key} must be true or false (got '${value}')`);
    else props[key] = value === 'true';
  }
  for (const key of NUMBER_SETTINGS) {
    const value = text(key);
    if (value === undefined) continue;
    const number = Number(value);
    if (!Number.isFinite(number)) problems.push(`context ${key} must be a number (got '${value}')`);
    else props[key] = number;
  }
  const priceClass = text('priceClass');
  if (priceClass !== undefined) {
    const value = PRICE_CLASSES[priceClass];
    if (value) props.priceClass = value;
    else
      problems.push(
        `context priceClass must be one of ${Object.keys(PRICE_CLASSES).join(', ')} (got '${priceClass}')`,
      );
  }
  const removalPolicy = text('removalPolicy');
  if (removalPolicy !== undefined) {
    const value = REMOVAL_POLICIES[removalPolicy];
    if (value) props.removalPolicy = value;
    else problems.push(`context removalPolicy must be retain or destroy (got '${removalPolicy}')`);
  }
  if (problems.length > 0) throw new SettingsError(problems);
  return { stackName: text('stackName') ?? DEFAULT_STACK_NAME, props: props as CatalogueStackProps };
}
