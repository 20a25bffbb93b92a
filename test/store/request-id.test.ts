/** Request ids: `req_` and 16 base64url characters, drawn in blocks of 128 and never repeated. */
import { describe, expect, it } from 'vitest';
import { newRequestId } from '../../store/request-id.js';

describe('newRequestId', () => {
  it('gives distinct ids of the documented form across many blocks', () => {
    const ids = Array.from({ length: 128 * 20 + 7 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('uses every base64url character, in every position (the ids are random, not a counter)', () => {
    const ids = Array.from({ length: 4_096 }, () => newRequestId().slice(4));
    for (let position = 0; position < 16; position++) {
      const seen = new Set(ids.map((id) => id[position]));
      // 4,096 draws of 64 symbols: a position missing more than a few of them is not uniform.
      expect(seen.size).toBeGreaterThan(60);
    }
  });
});
