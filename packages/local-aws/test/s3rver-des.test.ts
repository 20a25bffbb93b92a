/**
 * The DES shim for s3rver's continuation tokens (src/s3rver-des.ts): its ciphertext is single DES,
 * checked against published and precomputed vectors, and it changes no other call.
 */
import { createCipheriv as untouchedCreateCipheriv } from 'node:crypto';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { installS3rverDes } from '../src/s3rver-des.js';

// What s3rver's `require('crypto')` returns: the object the shim wraps.
const crypto = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
const hex = (value: string) => Buffer.from(value, 'hex');

function encrypt(key: Buffer, iv: Buffer, plaintext: Buffer, padding = true): string {
  const cipher = crypto.createCipheriv('des', key, iv);
  cipher.setAutoPadding(padding);
  return Buffer.concat([cipher.update(plaintext), cipher.final()]).toString('hex');
}

function decrypt(key: Buffer, iv: Buffer, ciphertext: Buffer): Buffer {
  const decipher = crypto.createDecipheriv('des', key, iv);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
}

beforeAll(() => installS3rverDes());

describe('the s3rver DES shim', () => {
  it('encrypts the FIPS 81 DES-CBC example to its published ciphertext', () => {
    const key = hex('0123456789abcdef');
    const iv = hex('1234567890abcdef');
    const plaintext = Buffer.from('Now is the time for all ', 'latin1');
    expect(encrypt(key, iv, plaintext, false)).toBe('e5c7cdde872bf27c43e934008c389c0f683788499a7c05f6');
  });

  it("gives s3rver's token the bytes of `node --openssl-legacy-provider` with 'des', and reads it back", () => {
    // Key and IV as s3rver's generateContinuationToken builds them; the expected bytes were computed once with
    // node --openssl-legacy-provider -e "crypto.createCipheriv('des', key, iv)…" (real single DES).
    const key = Buffer.alloc(8, 'S3RVER', 'utf8');
    const iv = hex('d4a1b2c3d4e5f607');
    const token = Buffer.from('us-east-1/catalogue/o/abcdefghijklmnopqrstuv', 'utf8');
    const expected =
      'ccdac3a3897b5ae9ecd1f671fb62925139f3bbde72c6fd1ab8926d3f262b5df757f5d983750492ecbd39d6c0fd016135';
    expect(encrypt(key, iv, token)).toBe(expected);
    expect(decrypt(key, iv, hex(expected)).toString('utf8')).toBe(token.toString('utf8'));
  });

  it('round-trips any length, padding included', () => {
    const key = Buffer.from('8bytekey');
    const iv = hex('d7000000000000ff');
    for (const length of [0, 1, 7, 8, 9, 100, 1024]) {
      const plaintext = Buffer.alloc(length, length % 251);
      const ciphertext = hex(encrypt(key, iv, plaintext));
      expect(ciphertext.length).toBe((Math.floor(length / 8) + 1) * 8);
      expect(decrypt(key, iv, ciphertext)).toEqual(plaintext);
    }
  });

  it('leaves every other algorithm, and a DES call it cannot map, to the original functions', () => {
    const key = Buffer.alloc(16, 7);
    const iv = Buffer.alloc(16, 9);
    const wrapped = crypto.createCipheriv('aes-128-cbc', key, iv);
    const original = untouchedCreateCipheriv('aes-128-cbc', key, iv);
    expect(Buffer.concat([wrapped.update('same bytes'), wrapped.final()])).toEqual(
      Buffer.concat([original.update('same bytes'), original.final()]),
    );
    // A 16-byte key is not single DES: the original call decides (it refuses the key length).
    expect(() => crypto.createCipheriv('des', key, Buffer.alloc(8))).toThrow();
  });

  it('installs once, however often it is called', () => {
    const cipheriv = crypto.createCipheriv;
    const decipheriv = crypto.createDecipheriv;
    installS3rverDes();
    installS3rverDes();
    expect(crypto.createCipheriv).toBe(cipheriv);
    expect(crypto.createDecipheriv).toBe(decipheriv);
  });
});
