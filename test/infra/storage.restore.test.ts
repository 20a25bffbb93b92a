/**
 * The keys table's restore setting (infra/storage.ts, `keysTableName`): one setting points the whole stack at a
 * table restored to a point in time. Every place of the default template that names the stack's own keys table
 * (a function's KEYS_TABLE, an IAM grant on it or its indexes, the check key's registration, an alarm's or the
 * dashboard's TableName, the KeysTableName output) names the restored table instead, and nothing refers to the
 * stack's own table any more (CloudFormation retains it, unused). The counters table is untouched.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { CatalogueStack } from '../../infra/stack.js';
import { logicalId, newApp } from './helpers.js';

const RESTORED = 'catalogue-keys-2026-11-30';
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

let byDefault: Record<string, Json>;
let restored: Record<string, Json>;
let keysId: string;
let countersId: string;

beforeAll(() => {
  const original = Template.fromStack(new CatalogueStack(newApp({ bundle: false }), 'Catalogue'));
  keysId = logicalId(original, 'AWS::DynamoDB::Table', 'StorageKeys');
  countersId = logicalId(original, 'AWS::DynamoDB::Table', 'StorageCounters');
  byDefault = original.toJSON() as Record<string, Json>;
  restored = Template.fromStack(
    new CatalogueStack(newApp({ bundle: false }), 'Catalogue', { keysTableName: RESTORED }),
  ).toJSON() as Record<string, Json>;
}, 120_000);

/** Every path of `node` whose value refers to the logical id `id` (a Ref, a GetAtt, a DependsOn). */
function pathsReferring(node: Json, id: string, path: string[] = []): string[][] {
  if (typeof node === 'string') return node === id ? [path] : [];
  if (node === null || typeof node !== 'object') return [];
  if (!Array.isArray(node)) {
    if (node.Ref === id) return [path];
    const getAtt = node['Fn::GetAtt'];
    if (Array.isArray(getAtt) && getAtt[0] === id) return [path];
  }
  const entries = Array.isArray(node) ? node.map((v, i) => [String(i), v] as const) : Object.entries(node);
  return entries.flatMap(([key, value]) => pathsReferring(value, id, [...path, key]));
}

const at = (root: Json, path: string[]): Json =>
  path.reduce<Json>((node, key) => (node as Record<string, Json>)?.[key] ?? null, root);

describe('keysTableName', () => {
  it('names the restored table everywhere the stack named its own keys table', () => {
    const paths = pathsReferring(byDefault, keysId).filter(
      // The table's own resource, and what only orders resources, have nothing to switch.
      ([section, resource, field]) =>
        !(section === 'Resources' && resource === keysId) && field !== 'DependsOn',
    );
    const places = paths.map((path) => path.slice(0, 2).join('/'));

    // Readers and writers: the proxy, the admin API, the check key's registration; their grants; the alarm,
    // the dashboard and the output.
    for (const expected of [
      'Resources/ProxyFunction',
      'Resources/AdminFunction',
      'Resources/ScheduledCheckKey',
      'Resources/Alarms',
      'Resources/Dashboard',
      'Outputs/KeysTableName',
    ]) {
      expect(
        places.some((place) => place.startsWith(expected)),
        expected,
      ).toBe(true);
    }
    expect(places.filter((place) => place.includes('Policy')).length).toBeGreaterThanOrEqual(3);
    for (const found of paths) {
      // The whole expression that names the table (an ARN joined from parts, a table name in a dashboard body).
      const join = found.findIndex((key) => key.startsWith('Fn::'));
      const path = join === -1 ? found : found.slice(0, join);
      const switched = at(restored, path);
      expect(switched, path.join('/')).not.toBeNull();
      expect(JSON.stringify(switched), path.join('/')).toContain(RESTORED);
    }
  });

  it('leaves nothing referring to the stack’s own keys table, and no keys table of its own', () => {
    expect(pathsReferring(restored, keysId)).toEqual([]);
    const tables = Object.entries(restored.Resources as Record<string, { Type: string }>).filter(
      ([, r]) => r.Type === 'AWS::DynamoDB::Table',
    );
    expect(tables.map(([id]) => id)).toEqual([countersId]);
  });

  it('grants exactly the restored table and its two indexes, as it granted its own', () => {
    const text = JSON.stringify(restored);
    expect(text).toContain(`:table/${RESTORED}"`);
    expect(text).toContain(`:table/${RESTORED}/index/key_id-index"`);
    expect(text).toContain(`:table/${RESTORED}/index/owner-index"`);
  });

  it('is refused when it cannot be a DynamoDB table name', () => {
    expect(
      () => new CatalogueStack(newApp({ bundle: false }), 'Bad', { keysTableName: 'no spaces allowed' }),
    ).toThrow(
      "keysTableName must be a DynamoDB table name: 3 to 255 letters, digits, _ - or . (got 'no spaces allowed')",
    );
  });
});
