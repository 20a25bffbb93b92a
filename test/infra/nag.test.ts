/**
 * cdk-nag (AwsSolutions) over the stack, with defaults and with every option: no unacknowledged error or
 * warning, every acknowledgement carries a reason, and none is stale (each one silences a real finding).
 */

import type { App, PolicyViolation } from 'aws-cdk-lib';
import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CatalogueStackProps } from '../../infra/props.js';
import { CatalogueStack } from '../../infra/stack.js';
import { ALL_OPTIONS, newApp } from './helpers.js';

/** cdk-nag acknowledgements (`Annotation::AwsSolutions-…`) recorded on the constructs under `scope`. */
function acknowledgements(scope: IConstruct): { path: string; id: string; reason: string }[] {
  return scope.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>))
      .map(([id, reason]) => ({ path: construct.node.path, id: id.replace(/^annotation::/i, ''), reason }))
      .filter((ack) => ack.id.startsWith('AwsSolutions-')),
  );
}

function findings(violations: readonly PolicyViolation[]) {
  return violations.map(
    (v) => `${v.severity} ${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
  );
}

describe.each<[string, CatalogueStackProps]>([
  ['defaults', {}],
  ['every option', ALL_OPTIONS],
  ['a rate-based web ACL', { wafRateLimitPer5Min: 2_000 }],
])('AwsSolutions checks with %s', (_name, props) => {
  let app: App;
  let stack: CatalogueStack;
  let pack: AwsSolutionsChecks;
  beforeAll(() => {
    // CloudFormation's validation of the same templates is test/infra/stack.resource-spec.test.ts's; the
    // checks read the template, not the functions' code: no bundling.
    app = newApp({ bundle: false });
    stack = new CatalogueStack(app, 'Nag', props);
    pack = new AwsSolutionsChecks(app);
  });

  it('reports no unacknowledged error or warning', () => {
    const result = pack.validateScope(stack);

    expect(findings(result.violations)).toEqual([]);
    expect(result.success).toBe(true);
  });

  it('passes synthesis with the checks registered as in infra/app.ts', () => {
    Validations.of(app).addPlugins(pack);

    expect(() => Template.fromStack(stack)).not.toThrow();
  });

  it('gives every acknowledgement a specific reason', () => {
    const acks = acknowledgements(stack);

    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) expect(ack.reason.length, `${ack.id} at ${ack.path}`).toBeGreaterThan(60);
  });

  // Last: it removes the acknowledgements from this app's constructs.
  it('acknowledges only findings that occur', () => {
    const acks = acknowledgements(stack);
    for (const construct of stack.node.findAll()) {
      for (const entry of construct.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        for (const key of Object.keys(entry.data))
          if (/^annotation::AwsSolutions-/i.test(key)) delete entry.data[key];
      }
    }

    const raised = new AwsSolutionsChecks(app).validateScope(stack).violations.map((v) => v.ruleName);

    expect([...new Set(raised)].sort()).toEqual([...new Set(acks.map((a) => a.id))].sort());
  });
});
