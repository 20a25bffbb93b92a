/** Each alarm's description names its runbook section (infra/runbook.ts): `Runbook: <runbookUrl>#<name>`. */
import { Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { runbookDescription, useRunbook } from '../../infra/runbook.js';
import { newApp } from './helpers.js';

describe('runbookDescription', () => {
  it("ends with the section's link, in the guide by default or at the stack's runbookUrl", () => {
    const plain = new Stack(newApp({ bundle: false }), 'Plain');
    const hosted = new Stack(newApp({ bundle: false }), 'Hosted');
    useRunbook(hosted, 'https://git.example.com/api/blob/main/docs/operating.md');

    expect(runbookDescription(plain, 'proxy-5xx-rate', 'Too many 5xx.')).toBe(
      'Too many 5xx. Runbook: docs/operating.md#proxy-5xx-rate',
    );
    expect(runbookDescription(hosted, 'admin-errors', 'An admin call failed.')).toBe(
      'An admin call failed. Runbook: https://git.example.com/api/blob/main/docs/operating.md#admin-errors',
    );
  });

  it('refuses a description CloudWatch would cut (over 1,024 characters)', () => {
    const stack = new Stack(newApp({ bundle: false }), 'Long');
    expect(() => runbookDescription(stack, 'x', 'y'.repeat(1_000))).toThrow(
      'the description of alarm x is 1029 characters (at most 1024)',
    );
  });
});
