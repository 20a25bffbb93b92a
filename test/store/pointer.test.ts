/**
 * Reading a pointer (store/pointer.ts): only bytes that are exactly what the builder writes for it (its
 * version, the hash of its content, checks out); a damaged pointer is told apart from one of a format this
 * code does not read; format 2 is read as well as format 3.
 */
import { describe, expect, it } from 'vitest';
import { FORMAT_VERSION, objectIdFor } from '../../store/layout.js';
import { encodePointer, encodeShard, parseShard, readPointer } from '../../store/pointer.js';

const shards = [objectIdFor(Buffer.from('a')), objectIdFor(Buffer.from('b'))];

describe('readPointer', () => {
  it('takes the pointers of both readable formats, exactly as written', () => {
    for (const format of [2, FORMAT_VERSION] as const) {
      const { pointer, bytes } = encodePointer(shards, format);
      expect(readPointer(bytes)).toEqual({ ok: true, pointer });
      expect(pointer.format).toBe(format);
    }
  });

  it('a byte flipped anywhere, or the bytes cut short, is malformed', () => {
    const { bytes } = encodePointer(shards);
    for (let at = 0; at < bytes.byteLength; at++) {
      const damaged = Buffer.from(bytes);
      damaged[at] = damaged[at]! ^ 0x04;
      expect(readPointer(damaged).ok, `byte ${at}`).toBe(false);
    }
    expect(readPointer(bytes.subarray(0, bytes.byteLength - 1))).toEqual({ ok: false, reason: 'malformed' });
    // Re-serialised with other spacing: the same JSON, not the builder's bytes.
    const spaced = Buffer.from(JSON.stringify(JSON.parse(bytes.toString()), null, 1));
    expect(readPointer(spaced)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('a well-formed pointer of another format is unsupported-format (a release mismatch, not damage)', () => {
    const foreign = Buffer.from(JSON.stringify({ format: 4, shards, version: 'A'.repeat(22) }));
    expect(readPointer(foreign)).toEqual({ ok: false, reason: 'unsupported-format' });
    expect(readPointer(Buffer.from(JSON.stringify({ format: 1, version: 'x', lists: {} })))).toEqual({
      ok: false,
      reason: 'unsupported-format',
    });
  });
});

describe('shards of either format', () => {
  it('a shard is read as the format of the pointer that names it', () => {
    const entries = new Map([['modules/1', 'A'.repeat(22)]]);
    const old = encodeShard(entries, 2);
    expect(parseShard(old, 2)).toEqual({ 'modules/1': 'A'.repeat(22) });
    expect(parseShard(old)).toBeUndefined();
    expect(parseShard(encodeShard(entries))).toEqual({ 'modules/1': 'A'.repeat(22) });
  });
});
