/**
 * The admin handler's audit line: its time from the context's clock (the one the actions use, which tests
 * and npm start inject), its request id the answer's. Requests refused before any table is read, so no
 * DynamoDB is needed.
 */
import { describe, expect, it } from 'vitest';
import type { AdminContext } from '../../../admin/actions.js';
import { type AuditLine, createAdminHandler } from '../../../admin/http/handler.js';
import { adminSettings } from '../../../admin/settings.js';

const CLOCK = new Date('2031-02-03T04:05:06.789Z');

function handler() {
  const lines: AuditLine[] = [];
  const context: AdminContext = {
    tables: {} as AdminContext['tables'], // never reached: every request below is refused before it
    settings: adminSettings({ KEYS_TABLE: 'k', COUNTERS_TABLE: 'c' }),
    now: () => CLOCK,
  };
  return { lines, handle: createAdminHandler({ context, log: (line) => lines.push(line) }) };
}

describe('the audit line', () => {
  const principal = { arn: 'arn:aws:iam::123456789012:role/operator', accountId: '123456789012' };
  it.each([
    ['GET', '/v2/nothing', principal, 404],
    ['DELETE', '/v1/keys', principal, 405],
    ['GET', '/v1/keys', undefined, 403],
  ])(
    "%s %s: the time is the context's clock and the id the answer's",
    async (method, path, signed, status) => {
      const { lines, handle } = handler();
      const answer = await handle({
        method,
        path,
        query: '',
        headers: {},
        body: Buffer.alloc(0),
        principal: signed,
      });
      expect(answer.status).toBe(status);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        type: 'admin_audit',
        time: CLOCK.toISOString(),
        request_id: answer.headers['x-request-id'],
        status,
      });
      expect(lines[0]?.request_id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
      expect(JSON.parse(answer.body).error.request_id).toBe(lines[0]?.request_id);
    },
  );
});
