import { describe, expect, it } from 'vitest';
import {
  advanceHistory,
  EMPTY_HISTORY,
  type History,
  partitionHistory,
} from '../../../builder/publish/history.js';

const [A, B, C] = ['A'.repeat(22), 'B'.repeat(22), 'C'.repeat(22)];
const t = (hour: number) => new Date(Date.UTC(2026, 0, 1, hour));
const iso = (hour: number) => t(hour).toISOString();

describe('the publication log', () => {
  it('supersedes the pointer version when another becomes current', () => {
    const first = advanceHistory(EMPTY_HISTORY, null, A, t(0));
    const second = advanceHistory(first, A, B, t(1));

    expect(second.versions).toEqual([
      { version: A, current_since: iso(0), superseded_at: iso(1) },
      { version: B, current_since: iso(1), superseded_at: null },
    ]);
  });

  it('heals a publish that died after the log and before the pointer', () => {
    // The log claims B is current since 1h, but the pointer still names A: B never went live.
    const dead: History = {
      format: 1,
      versions: [
        { version: A, current_since: iso(0), superseded_at: iso(1) },
        { version: B, current_since: iso(1), superseded_at: null },
      ],
    };

    const next = advanceHistory(dead, A, C, t(5));

    expect(next.versions).toEqual([
      { version: A, current_since: iso(0), superseded_at: iso(5) }, // served until now
      { version: B, current_since: iso(1), superseded_at: iso(5) },
      { version: C, current_since: iso(5), superseded_at: null },
    ]);
  });

  it('adds a pointer version that predates the log', () => {
    expect(advanceHistory(EMPTY_HISTORY, A, B, t(2)).versions[0]).toEqual({
      version: A,
      current_since: null,
      superseded_at: iso(2),
    });
  });

  it('keeps versions superseded less than the retention ago, and the current one', () => {
    const history = advanceHistory(
      advanceHistory(advanceHistory(EMPTY_HISTORY, null, A, t(0)), A, B, t(1)),
      B,
      C,
      t(20),
    );

    const { kept, expired } = partitionHistory(history, t(24), 24 * 3_600_000);
    const later = partitionHistory(history, t(44), 24 * 3_600_000);

    expect(kept.versions.map((v) => v.version)).toEqual([A, B, C]);
    expect(expired).toEqual([]);
    expect(later.expired).toEqual([A, B]);
  });
});
