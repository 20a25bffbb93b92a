/** When `npm start` publishes its source, and what it says it serves (local/published.ts). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  decideStart,
  type PublishedRecord,
  readPublishedRecord,
  servedFrom,
  writePublishedRecord,
} from '../../local/published.js';

const scratch = mkdtempSync(join(tmpdir(), 'cat-published-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const record: PublishedRecord = {
  source: '/work/my-catalogue',
  digest: 'd1',
  version: 'V1',
  published_at: '2026-11-24T15:00:00.000Z',
};
const current = { pointer: 'current', version: 'V1' } as const;

describe('decideStart', () => {
  it.each([
    ['nothing published', { pointer: 'none' } as const, { named: false }, undefined, true],
    ['an unreadable pointer', { pointer: 'unreadable' } as const, { named: false }, record, true],
    ['the default source, something published', current, { named: false }, record, false],
    [
      'the default source, published by someone else',
      { pointer: 'current', version: 'V9' } as const,
      { named: false },
      undefined,
      false,
    ],
    ['a named source, unchanged', current, { named: true, digest: 'd1' }, record, false],
    [
      'a named source, unchanged, a publisher published over it',
      { pointer: 'current', version: 'V9' } as const,
      { named: true, digest: 'd1' },
      record,
      false,
    ],
    ['a named source, changed', current, { named: true, digest: 'd2' }, record, true],
    [
      'a named source never published here',
      current,
      { named: true, digest: 'd1', path: '/work/other' },
      record,
      true,
    ],
    ['a named source, no record', current, { named: true, digest: 'd1' }, undefined, true],
  ] as const)('%s → publish: %s', (_, state, source, known, publish) => {
    const decision = decideStart(state, { path: '/work/my-catalogue', ...source }, known);

    expect(decision.publish).toBe(publish);
    expect(decision.reason).not.toBe('');
  });

  it('serves the version the pointer names', () => {
    expect(
      decideStart({ pointer: 'current', version: 'V9' }, { path: '/x', named: false }, undefined),
    ).toEqual({
      publish: false,
      version: 'V9',
      reason: 'serving what is published (CATALOGUE_SOURCE not set)',
    });
  });
});

describe('servedFrom', () => {
  it('says whether npm start or a publisher published the version served', () => {
    const display = (path: string) => path.replace('/work/', '');

    expect(servedFrom('V1', record, display)).toBe(
      'published from my-catalogue by npm start at 2026-11-24T15:00:00.000Z',
    );
    expect(servedFrom('V2', record, display)).toBe(
      'published by a publisher over what npm start published from my-catalogue at 2026-11-24T15:00:00.000Z (version V1)',
    );
    expect(servedFrom('V2', undefined, display)).toBe(
      'published by a publisher (npm start has no record of publishing here)',
    );
  });
});

describe('the record and the digest', () => {
  it('round-trips the record; a missing or damaged one is no record', () => {
    const dir = mkdtempSync(join(scratch, 'record-'));
    expect(readPublishedRecord(dir)).toBeUndefined();

    writePublishedRecord(dir, record);
    expect(readPublishedRecord(dir)).toEqual(record);

    writeFileSync(join(dir, 'published.json'), '{"source": 1}');
    expect(readPublishedRecord(dir)).toBeUndefined();
  });
});
