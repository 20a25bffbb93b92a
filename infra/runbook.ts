/**
 * Every alarm of the app names its runbook section (docs/operating.md, "7. The alarms and what to do"): its
 * description ends with `Runbook: <runbookUrl>#<name>`, where `<name>` is the alarm's name without the stack's
 * prefix (`proxy-5xx-rate`) and the guide has a section of that title (test/docs/runbook.test.ts matches them).
 */
import { Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DEFAULTS } from './props.js';

/** The runbook's address per stack (`runbookUrl`), set by the stack before its alarms are made. */
const RUNBOOKS = new WeakMap<Stack, string>();

/** Where `scope`'s stack reads its runbook (`runbookUrl`). */
export function useRunbook(scope: Construct, url: string): void {
  RUNBOOKS.set(Stack.of(scope), url);
}

/**
 * An alarm's description: `text`, then the link to the runbook section `name`. CloudWatch keeps at most
 * 1,024 characters of a description: a longer one is a mistake made here, refused at synthesis.
 * @example runbookDescription(this, 'proxy-5xx-rate', 'More than …') // → 'More than … Runbook: docs/operating.md#proxy-5xx-rate'
 */
export function runbookDescription(scope: Construct, name: string, text: string): string {
  const url = RUNBOOKS.get(Stack.of(scope)) ?? DEFAULTS.runbookUrl;
  const description = `${text} Runbook: ${url}#${name}`;
  if (description.length > 1024) {
    throw new Error(`the description of alarm ${name} is ${description.length} characters (at most 1024)`);
  }
  return description;
}
