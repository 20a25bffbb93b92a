/**
 * The guide's runbook (docs/operating.md, "7. The alarms and what to do") against the synthesized templates of
 * both stacks: every alarm has a section titled by its name (the stack's prefix and a deploy alarm's version
 * taken off), each section says what it means, the first query, the decision and how recovery shows, and no
 * section is left for an alarm that is gone. Each alarm's description links its own section.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { CatalogueStack } from '../../infra/stack.js';
import { newApp } from '../infra/helpers.js';

const GUIDE = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'operating.md'), 'utf8');

/** The `### ` sections of the runbook: title → body. */
function sections(): Map<string, string> {
  const start = GUIDE.indexOf('\n## 7. The alarms and what to do\n');
  const end = GUIDE.indexOf('\n## ', start + 1);
  const runbook = GUIDE.slice(start, end);
  const found = new Map<string, string>();
  for (const part of runbook.split('\n### ').slice(1)) {
    const [title, ...body] = part.split('\n');
    found.set(title!.trim(), body.join('\n'));
  }
  return found;
}

/** An alarm's name without its stack prefix and a deploy alarm's version (`proxy-new-version-5xx-rate`). */
function alarmName(stack: string, name: unknown): string {
  const text =
    typeof name === 'string' ? name : (name as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1][0];
  return String(text).replace(`${stack}-`, '').replace(/-v$/, '');
}

let alarms: { name: string; description: string }[];
beforeAll(() => {
  const stack = new CatalogueStack(newApp({ bundle: false }), 'Runbook');
  alarms = [stack, stack.edgeAlarms].flatMap((s) =>
    Object.values(Template.fromStack(s).findResources('AWS::CloudWatch::Alarm')).map((alarm) => ({
      name: alarmName('Runbook', alarm.Properties.AlarmName),
      description: alarm.Properties.AlarmDescription as string,
    })),
  );
}, 120_000);

describe('the runbook', () => {
  it('has a section for every alarm of both stacks, each linked from its description', () => {
    const titles = sections();
    expect(alarms).toHaveLength(17);
    for (const { name, description } of alarms) {
      expect(titles.has(name), `no runbook section '### ${name}'`).toBe(true);
      expect(description).toMatch(new RegExp(` Runbook: docs/operating\\.md#${name}$`));
    }
  });

  it('has no section for an alarm that is gone (its other sections are not alarms)', () => {
    const named = new Set(alarms.map((alarm) => alarm.name));
    const others = [...sections().keys()].filter((title) => !named.has(title));
    expect(others).toEqual(['The scheduled check', 'The CloudFront alarms']);
  });

  it('says in each what it means, the first query, the decision and how recovery shows', () => {
    const titles = sections();
    for (const { name } of alarms) {
      const body = titles.get(name)!;
      for (const part of ['**Means:**', '**First query**', '**Decide:**', '**Recovered when:**']) {
        expect(body, `${name}: ${part}`).toContain(part);
      }
      expect(body, `${name}: the query, pasted as is`).toMatch(/```(?:bash)?\n[\s\S]+?\n```/);
    }
  });
});
