import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../../proxy/quota/memory.js';

const _KEY = `pk_live_${'k'.repeat(22)}`;

describe('MemoryQuotaMeter', () => {
  const keys = new MemoryKeyStore();
  const at = (iso: string) => new Date(iso);

  it('admits exactly the minute limit, then refuses until the next calendar minute', async () => {
    const key = keys.add(`pk_live_${'a'.repeat(22)}`, { limits: { minute: 3, month: 100 } });
    const meter = new MemoryQuotaMeter();
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await meter.meter(key, at('2026-11-21T10:00:30.000Z')));
    expect(results.map((r) => r.ok)).toEqual([true, true, true, false, false]);
    expect(results.map((r) => r.remainingMinute)).toEqual([2, 1, 0, 0, 0]);
    expect(results[3]).toMatchObject({ reason: 'minute', retryAfterSeconds: 30, remainingMonth: 97 });
    expect(results[0]!.reset).toBe(Date.parse('2026-11-21T10:00:00Z') / 1000);
    expect(await meter.meter(key, at('2026-11-21T10:01:00.000Z'))).toMatchObject({
      ok: true,
      remainingMinute: 2,
    });
  });

  it('refuses on the month before the minute, with Retry-After until the next month', async () => {
    const key = keys.add(`pk_live_${'b'.repeat(22)}`, { limits: { minute: 10, month: 2 } });
    const meter = new MemoryQuotaMeter();
    await meter.meter(key, at('2026-11-30T23:59:00Z'));
    await meter.meter(key, at('2026-11-30T23:59:00Z'));
    const refused = await meter.meter(key, at('2026-11-30T23:59:00Z'));
    expect(refused).toMatchObject({
      ok: false,
      reason: 'month',
      retryAfterSeconds: 60,
      remainingMinute: 0,
    });
    expect(await meter.meter(key, at('2026-12-01T00:00:00Z'))).toMatchObject({
      ok: true,
      remainingMonth: 1,
    });
  });

  it('counts per key', async () => {
    const a = keys.add(`pk_live_${'c'.repeat(22)}`, { limits: { minute: 1, month: 10 } });
    const b = keys.add(`pk_live_${'d'.repeat(22)}`, { limits: { minute: 1, month: 10 } });
    const meter = new MemoryQuotaMeter();
    const now = at('2026-11-21T10:00:00Z');
    expect((await meter.meter(a, now)).ok).toBe(true);
    expect((await meter.meter(b, now)).ok).toBe(true);
    expect((await meter.meter(a, now)).ok).toBe(false);
  });
});
