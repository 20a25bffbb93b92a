/**
 * The AWS environment as our processes read it, without loading the SDK (a CLI that may not need the SDK
 * imports this, not aws/sdk.ts, which loads the clients).
 */

/**
 * The region the clients use: the one given, else `AWS_REGION`, else us-east-1. Messages that name the
 * region call it too, so they name the one actually used.
 * @example awsRegion() // → 'us-east-1' when AWS_REGION is unset
 */
export function awsRegion(region?: string): string {
  return region ?? process.env.AWS_REGION ?? 'us-east-1';
}

/**
 * Silence the SDK's notice that its releases after January 2027 need Node 22: not actionable for `npm start`
 * and the CLIs on Node 20 (Lambda runs Node 22). The SDK checks once per process, when the first client is
 * made, so call this before that.
 * @example silenceSdkNodeVersionWarning(); // first thing in a CLI's entry point
 */
export function silenceSdkNodeVersionWarning(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}
