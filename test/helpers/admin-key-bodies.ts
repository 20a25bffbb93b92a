/**
 * The admin API's routes that take a key itself, in the body (admin/by-key.ts: `POST /v1/keys/lookup`, `POST
 * /v1/keys/revoke`) and the import of keys already issued (admin/import/api.ts: `POST /v1/keys/import`), as one
 * suite run against each way the API is served (test/admin/lambda.test.ts, test/local/admin.test.ts): a key
 * goes through only in the field that takes it, is never shown again in an answer or an audit line, and a
 * near miss there is refused unshown; an import's keys come back with their ids, a batch sent again writes
 * nothing twice, one bad key refuses the batch. Every answer is checked against admin/openapi.json.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashApiKey, importedKeyId } from '../../tables/keys.js';
import {
  type AdminAnswer,
  type CallOptions,
  type FindingsHarness,
  KEY,
  KEY_SHAPES,
} from './admin-findings.js';
import { adminResponseValidator } from './openapi.js';

const openapi = adminResponseValidator();
let owners = 0;
const owner = () => `bodies-${process.pid}-${++owners}`;
/** A key nobody issued: random, made here. */
const freshKey = () => `pk_live_${randomBytes(17).toString('base64url').slice(0, 22)}`;

export function describeKeyBodies(name: string, harness: () => FindingsHarness): void {
  const call = async (method: string, target: string, options?: CallOptions): Promise<AdminAnswer> => {
    const answer = await harness().call(method, target, options);
    openapi.assert({ method, path: `/v1${target.split('?')[0]}`, ...answer });
    return answer;
  };
  /** No answer but the one that issued it, and no audit line, holds `key`. */
  const unseen = (key: string, answers: readonly AdminAnswer[]) => {
    for (const answer of answers) expect(answer.body).not.toContain(key.slice(8));
    expect(JSON.stringify(harness().audit)).not.toContain(key.slice(8));
  };

  describe(`${name}: a key found and revoked from the key itself`, () => {
    it('finds it, revokes it at once (its counters stopped), again harmlessly; the key shown nowhere after', async () => {
      const issued = await call('POST', '/keys', { body: { owner: owner(), tier: 'free' } });
      const { key, key_id: keyId } = issued.json.data as { key: string; key_id: string };

      const found = await call('POST', '/keys/lookup', { body: { key } });
      const revoked = await call('POST', '/keys/revoke', { body: { key } });
      const again = await call('POST', '/keys/revoke', { body: { key } });
      const read = await call('GET', `/keys/${keyId}`);

      expect(found.status).toBe(200);
      expect(found.json.data).toMatchObject({ key_id: keyId, status: 'active', last_used: null });
      expect(revoked.json.data).toMatchObject({ key_id: keyId, status: 'revoked', changed: true });
      expect(Date.parse(revoked.json.data.stopped_until)).toBeGreaterThan(
        Date.parse(revoked.json.data.effective_by) + 3_600_000,
      );
      expect(again.json.data).toMatchObject({ key_id: keyId, changed: false });
      expect(read.json.data.status).toBe('revoked');
      const lines = harness().audit.filter((line) =>
        [found, revoked, again].some((answer) => answer.json.request_id === line.request_id),
      );
      expect(lines.map((line) => [line.action, line.key_id, line.outcome])).toEqual([
        ['lookup', keyId, 'ok'],
        ['revoke', keyId, 'ok'],
        ['revoke', keyId, 'unchanged'],
      ]);
      unseen(key, [found, revoked, again, read]);
    });

    it.each(KEY_SHAPES)(
      '%s that is no key of the table, or no key at all: refused, never shown',
      async (_, shape) => {
        for (const route of ['/keys/lookup', '/keys/revoke']) {
          const answer = await call('POST', route, { body: { key: shape } });

          expect(answer.status).toBe(shape === KEY ? 404 : 400);
          expect(answer.json.error.code).toBe(shape === KEY ? 'key_not_found' : 'invalid_request');
          unseen(shape, [answer]);
        }
      },
    );

    it('a key anywhere else in those bodies, or none at all, is refused', async () => {
      const key = freshKey();
      const elsewhere = await call('POST', '/keys/lookup', { body: { key, note: KEY } });
      const named = await call('POST', '/keys/revoke', { body: { [KEY]: key } });
      const none = await call('POST', '/keys/lookup', { body: {} });
      const inPath = await call('POST', `/keys/${key}/revoke`);

      for (const answer of [elsewhere, named, none, inPath]) expect(answer.status).toBe(400);
      expect(none.json.error.details).toEqual([
        { field: 'key', problem: expect.stringContaining('not shown') },
      ]);
      unseen(key, [elsewhere, named, none, inPath]);
    });
  });

  describe(`${name}: keys already issued, imported`, () => {
    it('answers each key with its id; sent again, nothing twice; a dry run writes nothing', async () => {
      const [plain, hashed, revoked, dry] = [freshKey(), freshKey(), freshKey(), freshKey()];
      const who = owner();
      const keys = [
        { key: plain, tier: 'partner', owner: who, minute: 1200, month: 3_000_000, external_id: 'old-1' },
        { key_sha256: hashApiKey(hashed), tier: 'free', owner: who, label: 'laptop' },
        { key: revoked, tier: 'free', status: 'revoked', external_id: 7 },
      ];

      const first = await call('POST', '/keys/import', { body: { keys } });
      const again = await call('POST', '/keys/import', { body: { keys } });
      const dryRun = await call('POST', '/keys/import', {
        body: { keys: [{ key: dry, tier: 'free' }], dry_run: true },
      });
      const found = await call('POST', '/keys/lookup', { body: { key: plain } });
      const notWritten = await call('POST', '/keys/lookup', { body: { key: dry } });

      const ids = [plain, hashed, revoked].map((key) => importedKeyId(hashApiKey(key)));
      expect(first.status).toBe(200);
      expect(first.json.data).toMatchObject({ dry_run: false, imported: 3, already_there: 0, conflicts: 0 });
      expect(first.json.data.keys).toEqual(
        ids.map((key_id, index) => ({ index, key_id, outcome: 'imported' })),
      );
      expect(again.json.data).toMatchObject({ imported: 0, already_there: 3 });
      expect(dryRun.json.data.keys).toEqual([
        { index: 0, key_id: importedKeyId(hashApiKey(dry)), outcome: 'to_import' },
      ]);
      expect(found.json.data).toMatchObject({
        key_id: ids[0],
        owner: who,
        tier: 'partner',
        limits: { minute: 1200, month: 3_000_000 },
        external_id: 'old-1',
        imported: expect.any(String),
      });
      expect(notWritten.status).toBe(404);
      const line = harness().audit.find((audit) => audit.request_id === first.json.request_id);
      expect(line).toMatchObject({ action: 'import', keys: { imported: 3, already_there: 0, conflicts: 0 } });
      unseen(plain, [first, again, found]);
      unseen(revoked, [first, again]);
    });

    it('one bad key refuses the whole batch by its place, writing nothing; so do a key twice and too many keys', async () => {
      const good = freshKey();
      const bad = await call('POST', '/keys/import', {
        body: {
          keys: [
            { key: good, tier: 'free' },
            { key: freshKey(), tier: 'gold' },
            { key: `${good}x`, tier: 'free' },
          ],
        },
      });
      const twice = await call('POST', '/keys/import', {
        body: {
          keys: [
            { key: good, tier: 'free' },
            { key_sha256: hashApiKey(good), tier: 'free' },
          ],
        },
      });
      const many = await call('POST', '/keys/import', {
        body: { keys: Array.from({ length: 101 }, () => ({ key_sha256: 'a'.repeat(64), tier: 'free' })) },
      });
      const labelled = await call('POST', '/keys/import', {
        body: { keys: [{ key: good, tier: 'free', label: KEY }] },
      });
      const written = await call('POST', '/keys/lookup', { body: { key: good } });

      expect(bad.status).toBe(400);
      expect(bad.json.error.details.map((detail: { field: string }) => detail.field)).toEqual([
        'keys[1].tier',
        'keys[2].key',
      ]);
      expect(twice.json.error.details).toEqual([{ field: 'keys[1].key', problem: 'is the key of keys[0]' }]);
      expect(many.status).toBe(400);
      expect(many.json.error.details[0].field).toBe('keys');
      expect(labelled.status).toBe(400);
      expect(written.status).toBe(404);
      unseen(good, [bad, twice, labelled, written]);
    });
  });
}
