/**
 * The synthesized template against the CloudFormation resource specification CDK itself ships (the resource
 * provider schemas bundled in aws-cdk-lib's CloudFormation validation, `CloudFormationValidatePlugin`, which
 * `cdk synth` and `cdk deploy` also run): every resource's property names, types and required properties, with
 * the default settings and with every option. What synthesis does not catch (a property override, an escape
 * hatch, a construct's mistake) fails here before a real deploy. The check is shown to fail on a planted wrong
 * property name, a wrong type and a missing required property.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, CloudFormationValidatePlugin, type PolicyViolation } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogueStackProps } from '../../infra/props.js';
import { ALL_OPTIONS, synth } from './helpers.js';

const scratch = mkdtempSync(join(tmpdir(), 'cat-resource-spec-'));
let plugin: CloudFormationValidatePlugin;
beforeAll(() => {
  plugin = new CloudFormationValidatePlugin();
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type TemplateJson = { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

/** The template of the stack with `props`, synthesised once in this file. */
const templates = new Map<CatalogueStackProps, TemplateJson>();
function templateOf(props: CatalogueStackProps): TemplateJson {
  if (!templates.has(props))
    templates.set(props, synth(props, 'Spec', { bundle: false }).template.toJSON() as TemplateJson);
  return templates.get(props)!;
}
const DEFAULTS: CatalogueStackProps = {};

/** The violations of `template`, each `severity rule resource: description`. */
function violations(template: TemplateJson, name: string): string[] {
  const templatePath = join(scratch, `${name}.template.json`);
  writeFileSync(templatePath, JSON.stringify(template));
  const report = plugin.validate({
    // The plugin reads the templates' files; the construct tree is not needed for a template read from disk.
    appConstruct: new App(),
    templatePaths: [templatePath],
    stackTemplates: [
      { stackConstructPath: name, templatePath, accountId: '123456789012', region: 'eu-west-1' },
    ],
  });
  return report.violations.flatMap((violation: PolicyViolation) =>
    violation.violatingResources.map(
      (resource) =>
        `${violation.severity} ${violation.ruleName} ${resource.resourceLogicalId ?? '-'}: ${violation.description}`,
    ),
  );
}

describe.each<[string, CatalogueStackProps]>([
  ['the default settings', DEFAULTS],
  ['every option', ALL_OPTIONS],
  ['a rate-based web ACL', { wafRateLimitPer5Min: 2_000 }],
])('the template with %s', (name, props) => {
  let found: string[];
  // Synthesis, and the first validation loads the engine: seconds each, more on a busy machine.
  beforeAll(() => {
    found = violations(templateOf(props), name.replaceAll(' ', '-'));
  }, 120_000);

  it('has every property of every resource as the specification defines it, and nothing else', () => {
    expect(found).toEqual([]);
  });
});

describe('the check', () => {
  let template: TemplateJson;
  let proxy: string;
  beforeAll(() => {
    template = templateOf(DEFAULTS);
    proxy = Object.keys(template.Resources).find(
      (id) => id.startsWith('ProxyFunction') && template.Resources[id]!.Type === 'AWS::Lambda::Function',
    )!;
  }, 120_000);

  /** The template with the proxy function's properties changed by `plant`. */
  const planted = (plant: (properties: Record<string, unknown>) => void): TemplateJson => {
    const copy = structuredClone(template);
    plant(copy.Resources[proxy]!.Properties);
    return copy;
  };

  it('fails on a wrong property name, naming the resource and the name it meant', () => {
    const found = violations(
      planted((properties) => {
        properties.MemorySze = properties.MemorySize;
        delete properties.MemorySize;
      }),
      'wrong-name',
    );

    expect(found).toEqual([
      expect.stringMatching(new RegExp(`^error F3002 ${proxy}: MemorySze: .*'MemorySize'`)),
    ]);
  });

  it('fails on a wrong type', () => {
    const found = violations(
      planted((properties) => {
        properties.Timeout = 'ten seconds';
      }),
      'wrong-type',
    );

    expect(found).toEqual([
      expect.stringMatching(new RegExp(`^error F3012 ${proxy}: Timeout: .*not of type 'integer'`)),
    ]);
  });

  it('fails on a missing required property', () => {
    const found = violations(
      planted((properties) => {
        delete properties.Role;
      }),
      'missing-required',
    );

    expect(found).toEqual([
      expect.stringMatching(new RegExp(`^error F3003 ${proxy}: .*'Role' is a required property`)),
    ]);
  });
});
