/** aws/env.ts: the region every client uses, and its one default (also the proxy's and the secret reader's). */
import { describe, expect, it } from 'vitest';
import { awsRegion, DEFAULT_REGION } from '../../aws/env.js';

describe('awsRegion', () => {
  it('takes the one given, else AWS_REGION, else the default', () => {
    expect(awsRegion('eu-west-1', { AWS_REGION: 'eu-central-1' })).toBe('eu-west-1');
    expect(awsRegion(undefined, { AWS_REGION: 'eu-central-1' })).toBe('eu-central-1');
    expect(awsRegion(undefined, {})).toBe(DEFAULT_REGION);
  });

  it('defaults to us-east-1', () => {
    expect(DEFAULT_REGION).toBe('us-east-1');
  });
});
