/**
 * The metrics the stack derives from the admin function's audit lines and the upload builder's report lines
 * with metric filters: the patterns, values and dimensions, and the fields they read as the product writes
 * them (admin/http/handler.ts AuditLine, builder/upload/report.ts UploadReport).
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { AuditLine } from '../../admin/http/handler.js';
import { DETAIL_TYPES, type UploadReport } from '../../builder/upload/report.js';
import { type ADMIN_LEVELS, UPLOAD_OUTCOMES } from '../../infra/log-metrics.js';
import { logicalId, synth } from './helpers.js';

let template: Template;
beforeAll(() => {
  template = synth({}, 'Catalogue', { bundle: false }).template;
});

describe('the admin API’s calls', () => {
  it('are counted from every audit line, by level, in the stack’s namespace', () => {
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logicalId(template, 'AWS::Logs::LogGroup', 'AdminLogs') },
      FilterPattern: '{ $.type = "admin_audit" }',
      MetricTransformations: [
        {
          MetricNamespace: 'CatalogueReadApi/Catalogue',
          MetricName: 'AdminCalls',
          MetricValue: '1',
          Dimensions: [{ Key: 'level', Value: '$.level' }],
          Unit: 'Count',
        },
      ],
    });
  });

  it('read the levels the audit line has', () => {
    expectTypeOf<AuditLine['level']>().toEqualTypeOf<(typeof ADMIN_LEVELS)[number]>();
    expectTypeOf<AuditLine['type']>().toEqualTypeOf<'admin_audit'>();
  });
});

describe('uploads', () => {
  it('are counted from the report lines (outcome, upload, seconds), their build time by outcome', () => {
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logicalId(template, 'AWS::Logs::LogGroup', 'UploadsLogs') },
      FilterPattern: '{ ($.outcome = "*") && ($.upload = "*") && ($.seconds = "*") }',
      MetricTransformations: [
        {
          MetricNamespace: 'CatalogueReadApi/Catalogue',
          MetricName: 'UploadSeconds',
          MetricValue: '$.seconds',
          Dimensions: [{ Key: 'outcome', Value: '$.outcome' }],
          Unit: 'Seconds',
        },
      ],
    });
  });

  it('read the outcomes and fields the report has', () => {
    expect([...UPLOAD_OUTCOMES].sort()).toEqual(Object.keys(DETAIL_TYPES).sort());
    expectTypeOf<UploadReport['outcome']>().toEqualTypeOf<(typeof UPLOAD_OUTCOMES)[number]>();
    expectTypeOf<UploadReport['seconds']>().toEqualTypeOf<number>();
    expectTypeOf<UploadReport['upload']>().toEqualTypeOf<string>();
  });
});
