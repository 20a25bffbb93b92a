/**
 * One line of an import (admin/import/line.ts): every field taken as the admin API takes it, every kind of bad
 * line refused with its field named and nothing of what it held in the problem, the key's hash and id the
 * same whether the line gives the key or its SHA-256, and what makes a key already in the table differ.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { differences, type ImportLine, parseImportLine } from '../../../admin/import/line.js';
import { PARTNER_DEFAULT_LIMITS } from '../../../admin/settings.js';
import { hashApiKey, importedKeyId, KEY_ID_PATTERN } from '../../../tables/keys.js';

const now = new Date('2026-11-24T12:00:00Z');
const context = { now, partnerDefaults: PARTNER_DEFAULT_LIMITS };
// Keys of nothing: made up for this test.
const KEY = 'pk_live_TestImportLineKey000000'.slice(0, 30);
const SHA = hashApiKey(KEY);

const parsed = (value: unknown): ImportLine => {
  const outcome = parseImportLine(value, context);
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.problems));
  return outcome.value;
};
const problems = (value: unknown) => {
  const outcome = parseImportLine(value, context);
  return outcome.ok ? [] : outcome.problems;
};

describe('a line that imports a key', () => {
  it('the key or its SHA-256 (either case) gives the same hash and the same key id, derived from the hash', () => {
    const plain = parsed({ key: KEY, tier: 'free' });
    const hashed = parsed({ key_sha256: SHA, tier: 'free' });
    const upper = parsed({ key_sha256: SHA.toUpperCase(), tier: 'free' });

    for (const line of [plain, hashed, upper]) {
      expect(line.record.keyHash).toBe(SHA);
      expect(line.record.keyId).toBe(importedKeyId(SHA));
    }
    expect(plain.record.keyId).toMatch(KEY_ID_PATTERN);
    expect(JSON.stringify(plain)).not.toContain(KEY);
  });

  it('takes every field: owner, label, partner limits, expiry, creation time, status, the old id', () => {
    const line = parsed({
      key_sha256: SHA,
      tier: 'partner',
      owner: 'org:7',
      label: '  Acme sync  ',
      minute: 1200,
      month: 2_000_000,
      expires: '2027-06-30',
      created: '2024-03-01T10:00:00+01:00',
      status: 'revoked',
      external_id: 42,
    });

    expect(line).toEqual({
      record: {
        keyHash: SHA,
        keyId: importedKeyId(SHA),
        tier: 'partner',
        status: 'revoked',
        limits: { minute: 1200, month: 2_000_000 },
        owner: 'org:7',
        label: 'Acme sync',
        expires: '2027-06-30T00:00:00.000Z',
        created: '2024-03-01T09:00:00.000Z',
        imported: now.toISOString(),
        externalId: '42',
      },
      createdGiven: true,
      defaultLimits: false,
    });
  });

  it('takes null as not given (an export of an empty column), with the defaults', () => {
    const line = parsed({
      key: KEY,
      tier: 'partner',
      owner: null,
      label: null,
      minute: null,
      month: null,
      expires: null,
      created: null,
      status: null,
      external_id: null,
    });

    expect(line.record).toEqual({
      keyHash: SHA,
      keyId: importedKeyId(SHA),
      tier: 'partner',
      status: 'active',
      limits: PARTNER_DEFAULT_LIMITS,
      created: now.toISOString(),
      imported: now.toISOString(),
    });
    expect(line).toMatchObject({ createdGiven: false, defaultLimits: true });
  });

  it('a free key carries the published limits, given or not; an expiry passed comes over (expired)', () => {
    expect(parsed({ key: KEY, tier: 'free', minute: 60, month: 5000 }).record.limits).toEqual({
      minute: 60,
      month: 5000,
    });
    expect(parsed({ key: KEY, tier: 'free', expires: '2020-01-01T00:00:00Z' }).record.expires).toBe(
      '2020-01-01T00:00:00.000Z',
    );
  });
});

describe('a line refused', () => {
  it.each([
    ['not an object', [1, 2], 'line'],
    ['no key', { tier: 'free' }, 'key'],
    ['key and its hash', { key: KEY, key_sha256: SHA, tier: 'free' }, 'key'],
    ['a key of the wrong shape', { key: `${KEY}x`, tier: 'free' }, 'key'],
    ['a key that is not a string', { key: 42, tier: 'free' }, 'key'],
    ['a hash too short', { key_sha256: SHA.slice(1), tier: 'free' }, 'key_sha256'],
    ['a hash that is not hex', { key_sha256: `${SHA.slice(1)}g`, tier: 'free' }, 'key_sha256'],
    ['the key where its hash goes', { key_sha256: KEY, tier: 'free' }, 'key_sha256'],
    ['no tier', { key: KEY }, 'tier'],
    ['an unknown tier', { key: KEY, tier: 'gold' }, 'tier'],
    ['free limits changed', { key: KEY, tier: 'free', minute: 100 }, 'tier'],
    ['a limit of 0', { key: KEY, tier: 'partner', minute: 0 }, 'minute'],
    ['a limit over the bound', { key: KEY, tier: 'partner', minute: 60_001 }, 'minute'],
    ['a limit as text', { key: KEY, tier: 'partner', month: '1000' }, 'month'],
    ['a day that does not exist', { key: KEY, tier: 'free', expires: '2027-02-30' }, 'expires'],
    ['an expiry too far', { key: KEY, tier: 'free', expires: '2040-01-01' }, 'expires'],
    ['a creation in the future', { key: KEY, tier: 'free', created: '2026-11-25T00:00:00Z' }, 'created'],
    ['a creation without a zone', { key: KEY, tier: 'free', created: '2024-03-01T10:00:00' }, 'created'],
    ['an unknown status', { key: KEY, tier: 'free', status: 'suspended' }, 'status'],
    ['an owner with a space', { key: KEY, tier: 'free', owner: 'user 42' }, 'owner'],
    ['a label of control characters', { key: KEY, tier: 'free', label: 'a\u202Eb' }, 'label'],
    ['an empty old id', { key: KEY, tier: 'free', external_id: '' }, 'external_id'],
    ['an old id too long', { key: KEY, tier: 'free', external_id: 'x'.repeat(129) }, 'external_id'],
    ['an unknown field', { key: KEY, tier: 'free', teir: 'free' }, 'teir'],
  ])('%s', (_, value, field) => {
    const found = problems(value);

    expect(found.map((problem) => problem.field)).toContain(field);
    expect(JSON.stringify(found)).not.toContain(KEY);
  });

  it('a key where a label, an owner or an old id goes: refused, and not shown', () => {
    for (const field of ['label', 'owner', 'external_id']) {
      const found = problems({ key_sha256: SHA, tier: 'free', [field]: KEY });
      expect(found.map((problem) => problem.field)).toEqual([field]);
      expect(JSON.stringify(found)).not.toContain(KEY);
    }
  });

  it('never shows what the line held, whatever it held (property)', () => {
    let cases = 0;
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom('key', 'key_sha256', 'tier', 'owner', 'label', 'expires', 'external_id', 'status'),
          fc.oneof(fc.string({ minLength: 6 }), fc.stringMatching(/^pk_live_[A-Za-z0-9_-]{22}$/)),
        ),
        (line) => {
          cases++;
          const shown = JSON.stringify(problems(line));
          for (const value of Object.values(line)) {
            if (value.length >= 6 && !/^(free|partner|active|revoked)$/.test(value))
              expect(shown).not.toContain(value);
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(cases).toBe(300);
  });
});

describe('a key already in the table', () => {
  const line = parsed({ key_sha256: SHA, tier: 'partner', owner: 'org:7', minute: 1200, month: 2_000_000 });

  it('the key this line imported (at another time) does not differ; a change here does, by field', () => {
    const later = parseImportLine(
      { key_sha256: SHA, tier: 'partner', owner: 'org:7', minute: 1200, month: 2_000_000 },
      { ...context, now: new Date('2026-12-01T00:00:00Z') },
    );
    expect(later.ok && differences(line.record, later.value)).toEqual([]);
    expect(differences({ ...line.record, status: 'revoked', label: 'x' }, line)).toEqual(['status', 'label']);
    expect(differences({ ...line.record, keyId: 'key_AAAAAAAAAA' }, line)).toEqual(['key_id']);
  });

  it('compares the creation time only where the line gives one', () => {
    const dated = parsed({ key_sha256: SHA, tier: 'free', created: '2024-01-01T00:00:00Z' });
    expect(differences({ ...dated.record, created: '2024-01-01T00:00:00Z' }, dated)).toEqual([]);
    expect(differences({ ...dated.record, created: '2024-01-02T00:00:00.000Z' }, dated)).toEqual(['created']);
  });
});
