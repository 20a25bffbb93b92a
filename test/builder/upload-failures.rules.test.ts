/**
 * The rules of `failed` and `retry` (builder/upload-failures.ts), as pure functions over listed uploads and their
 * reports: what counts as failed or lost, what is still too recent to tell, when the builder may still try by
 * itself; what retry refuses — and, as a property over any set of uploads, that a retry it allows without
 * --force never makes an older catalogue the newest upload over one that was not refused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newerUpload } from '../../builder/upload/order.js';
import type { UploadOutcome, UploadReport } from '../../builder/upload/report.js';
import { findFailures, retryKey, retryRefusal, type UploadState } from '../../builder/upload-failures.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const MINUTE = 60_000;
const AT = { now: NOW, afterMs: 60 * MINUTE, retriesWithinMs: 5 * MINUTE, bucket: 'catalogue' };

function report(key: string, outcome: UploadOutcome, finishedAgoMs = 30 * MINUTE): UploadReport {
  const finished = new Date(NOW - finishedAgoMs).toISOString();
  return {
    upload: key,
    etag: 'e',
    uploaded_at: null,
    uploaded_by: null,
    outcome,
    event_id: 'x',
    version: null,
    previous_version: null,
    snapshot: null,
    counts: null,
    changes: null,
    problems: [],
    problem_count: 0,
    superseded_by: null,
    error: outcome === 'failed' ? 'the bucket did not answer' : null,
    started_at: finished,
    finished_at: finished,
    seconds: 1,
    report: `reports/${key.slice('incoming/'.length, -'.tar.gz'.length)}.json`,
  };
}

function state(name: string, agoMs: number, outcome?: UploadOutcome, finishedAgoMs?: number): UploadState {
  const key = `incoming/${name}.tar.gz`;
  return {
    key,
    lastModified: new Date(NOW - agoMs),
    etag: 'e',
    size: 100,
    report: outcome && report(key, outcome, finishedAgoMs),
  };
}

describe('failed: what it lists', () => {
  it('lists failed reports and uploads without a report past --after, newest first; keeps the recent ones apart', () => {
    const states = [
      state('a-published', 300 * MINUTE, 'published'),
      state('b-failed', 200 * MINUTE, 'failed'),
      state('c-invalid', 150 * MINUTE, 'invalid'),
      state('d-lost', 90 * MINUTE),
      state('e-failing-now', 10 * MINUTE, 'failed', 1 * MINUTE),
      state('f-building', 5 * MINUTE),
    ];

    const found = findFailures(states, AT);

    expect(found.uploads).toBe(6);
    expect(found.failed.map((f) => [f.name, f.status, f.cause, f.builder_may_retry])).toEqual([
      ['e-failing-now', 'failed', 'the bucket did not answer', true],
      ['d-lost', 'no_report', 'no report after 60 minutes', false],
      ['b-failed', 'failed', 'the bucket did not answer', false],
    ]);
    expect(found.waiting).toEqual([
      { upload: 'incoming/f-building.tar.gz', uploaded_at: new Date(NOW - 5 * MINUTE).toISOString() },
    ]);
    // The newest upload after each that a retry would publish over: f (no report yet) for all three.
    expect(found.failed.map((f) => f.newer)).toEqual([
      { upload: 'incoming/f-building.tar.gz', outcome: 'no report' },
      { upload: 'incoming/f-building.tar.gz', outcome: 'no report' },
      { upload: 'incoming/f-building.tar.gz', outcome: 'no report' },
    ]);
    expect(found.failed[0]).toMatchObject({
      upload: 'incoming/e-failing-now.tar.gz',
      report_uri: 's3://catalogue/reports/e-failing-now.json',
      uploaded_at: new Date(NOW - 10 * MINUTE).toISOString(),
      last_attempt_at: new Date(NOW - 1 * MINUTE).toISOString(),
    });
  });

  it('an invalid upload, newer or not, never stands in a retry’s way', () => {
    const found = findFailures(
      [state('a-failed', 100 * MINUTE, 'failed'), state('b-invalid', 80 * MINUTE, 'invalid')],
      AT,
    );
    expect(found.failed.map((f) => f.newer)).toEqual([null]);
  });

  it('nothing to list in an empty incoming prefix', () => {
    expect(findFailures([], AT)).toEqual({ uploads: 0, failed: [], waiting: [] });
  });
});

describe('retry: what it refuses', () => {
  const at = { key: 'incoming/x.tar.gz', now: NOW, afterMs: 60 * MINUTE, force: false };

  it('an upload that is not there, even with --force', () => {
    expect(retryRefusal(undefined, [], { ...at, force: true })).toMatch(
      /^incoming\/x\.tar\.gz is not in the incoming prefix: never uploaded, or expired/,
    );
  });

  it.each([
    ['published', /published version null .*to publish it anyway, upload it again/],
    ['unchanged', /already live .*to publish it anyway, upload it again/],
    ['superseded', /superseded by the newer .*to publish it anyway, upload it again/],
    ['invalid', /refused, 0 problems.*fix the snapshot and upload it again/],
  ] as const)('an upload the builder has its final word on (%s), even with --force', (outcome, message) => {
    const own = state('x', 90 * MINUTE, outcome);
    expect(retryRefusal(own, [own], { ...at, force: true })).toMatch(message);
  });

  it('an upload without a report yet, made under --after ago, unless --force', () => {
    const own = state('x', 10 * MINUTE);
    expect(retryRefusal(own, [own], at)).toMatch(/has no report yet, but was uploaded only 10 minutes ago/);
    expect(retryRefusal(own, [own], { ...at, force: true })).toBeUndefined();
  });

  it('a failed upload is retried at once (a race with the builder’s own retry does no harm: the report is written once)', () => {
    const own = state('x', 2 * MINUTE, 'failed', 1 * MINUTE);
    expect(retryRefusal(own, [own], at)).toBeUndefined();
  });

  it.each(['published', 'unchanged', 'superseded', 'failed', undefined] as const)(
    'a newer upload that was not refused (%s) stands in the way, unless --force',
    (newerOutcome) => {
      const own = state('x', 120 * MINUTE, 'failed');
      const newer = state('y', 100 * MINUTE, newerOutcome);
      expect(retryRefusal(own, [own, newer], at)).toMatch(
        new RegExp(
          `^a newer upload, incoming/y\\.tar\\.gz \\(${newerOutcome ?? 'no report'}\\), came after incoming/x\\.tar\\.gz`,
        ),
      );
      expect(retryRefusal(own, [own, newer], { ...at, force: true })).toBeUndefined();
    },
  );

  it('without --force, never lets an older upload become the newest over one that was not refused (property)', () => {
    const outcomes: (UploadOutcome | undefined)[] = [
      'published',
      'unchanged',
      'invalid',
      'superseded',
      'failed',
      undefined,
    ];
    const arbitrary = fc.uniqueArray(
      fc.record({
        name: fc.stringMatching(/^[a-z0-9]{1,4}$/),
        agoMinutes: fc.integer({ min: 0, max: 200 }),
        outcome: fc.constantFrom(...outcomes),
      }),
      { selector: (upload) => upload.name, minLength: 1, maxLength: 8 },
    );
    let allowed = 0;
    fc.assert(
      fc.property(arbitrary, fc.nat(), (uploads, pick) => {
        const states = uploads.map((u) => state(u.name, u.agoMinutes * MINUTE, u.outcome));
        const own = states[pick % states.length]!;
        const refusal = retryRefusal(own, states, { ...at, key: own.key });
        if (refusal !== undefined) return;
        allowed++;
        expect(own.report === undefined || own.report.outcome === 'failed').toBe(true);
        for (const other of states) {
          if (other !== own && newerUpload(other, own)) expect(other.report?.outcome).toBe('invalid');
        }
      }),
      { numRuns: 500 },
    );
    // The property held over cases that were allowed, not only over refusals.
    expect(allowed).toBeGreaterThan(20);
  });
});

describe('retry: the name it takes', () => {
  it.each([
    ['20260601T120000.123Z-73bcfbfa6212', 'incoming/20260601T120000.123Z-73bcfbfa6212.tar.gz'],
    ['a.tar.gz', 'incoming/a.tar.gz'],
    ['incoming/a.tar.gz', 'incoming/a.tar.gz'],
    ['incoming/a', 'incoming/a.tar.gz'],
  ])('%s → %s', (given, key) => {
    expect(retryKey(given)).toBe(key);
  });

  it.each(['', '../current', 'a/b', '.hidden', 'a b', `${'a'.repeat(129)}`, 'reports/a', 'incoming/'])(
    'refuses %j as a usage error',
    (given) => {
      expect(() => retryKey(given)).toThrow(/an upload's name is letters, digits/);
    },
  );
});
