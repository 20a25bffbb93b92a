/**
 * Lets s3rver 3.7.1 page listings on Node ≥ 17 without OpenSSL's legacy provider.
 *
 * Why: s3rver encrypts its ListObjectsV2 continuation tokens with single DES
 * (`crypto.createCipheriv('des', key, iv)` in `lib/controllers/bucket.js`). OpenSSL 3, which Node ≥ 17 ships,
 * moved DES to the legacy provider, so on Node 20 and 22 that call throws `ERR_OSSL_EVP_UNSUPPORTED` and every
 * listing of more than 1,000 keys (the first one that needs a token) answers `500 InternalError`.
 *
 * How: triple DES in EDE mode with the key K‖K‖K is single DES with K, byte for byte
 * (E_K(D_K(E_K(x))) = E_K(x)), and `des-ede3-cbc` is in OpenSSL's default provider. So for the algorithm
 * `'des'` (DES-CBC) with an 8-byte key, and only for it, `createCipheriv` / `createDecipheriv` of the CommonJS
 * `crypto` module object (the object s3rver's `require('crypto')` returns and calls at call time) hand out a
 * `des-ede3-cbc` cipher with the tripled key. Every other call goes through untouched; a `'des'` call would
 * otherwise throw, so nothing that works today changes behaviour, and with the legacy provider loaded the
 * bytes are the same anyway.
 *
 * Why not the alternatives: `--openssl-legacy-provider` would have to be set on every process that runs
 * s3rver (npm start, every vitest worker, users' own scripts that call `startS3`); the fork
 * `@20minutes/s3rver` keeps the same DES token and its 5.x needs Node ≥ 24; a vendored, patched copy of
 * s3rver needs an install script (or a copy of the whole package) to stay applied.
 */
import { sharedCrypto } from './internals.js';

type Crypto = typeof import('node:crypto');

/** The CommonJS module object, shared with s3rver's `require('crypto')` (not an ESM namespace copy). */
const crypto = sharedCrypto();

/** Marks the installed shim on the shared `crypto` object, so a second module instance does not wrap twice. */
const INSTALLED = Symbol.for('catalogue-read-api.s3rver-des');

/** The `des-ede3-cbc` key equivalent to a single-DES key, or undefined when `key` is not 8 raw bytes. */
function tripledKey(algorithm: unknown, key: unknown): Buffer | undefined {
  if (typeof algorithm !== 'string' || algorithm.toLowerCase() !== 'des') return undefined;
  if (!(key instanceof Uint8Array) || key.byteLength !== 8) return undefined;
  const single = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return Buffer.concat([single, single, single]);
}

/**
 * Install the shim (idempotent: once per process, whatever the number of calls or module instances).
 * `startS3` calls it before s3rver runs.
 * @example
 * installS3rverDes();
 * require('node:crypto').createCipheriv('des', Buffer.alloc(8, 'S3RVER'), iv); // works on Node 20 and 22
 */
export function installS3rverDes(): void {
  const shared = crypto as Crypto & { [INSTALLED]?: true };
  if (shared[INSTALLED]) return;
  const createCipheriv = crypto.createCipheriv;
  const createDecipheriv = crypto.createDecipheriv;
  // Plain functions with the originals' `this` and arguments: any other call is exactly the original call.
  shared.createCipheriv = function (this: unknown, ...args: unknown[]) {
    const key = tripledKey(args[0], args[1]);
    const call = key ? ['des-ede3-cbc', key, ...args.slice(2)] : args;
    return Reflect.apply(createCipheriv, this, call);
  } as Crypto['createCipheriv'];
  shared.createDecipheriv = function (this: unknown, ...args: unknown[]) {
    const key = tripledKey(args[0], args[1]);
    const call = key ? ['des-ede3-cbc', key, ...args.slice(2)] : args;
    return Reflect.apply(createDecipheriv, this, call);
  } as Crypto['createDecipheriv'];
  shared[INSTALLED] = true;
}
