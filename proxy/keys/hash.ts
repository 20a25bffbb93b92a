/** The API key wire format, and what is stored instead of the key. */
import { hash, randomBytes } from 'node:crypto';

/** `pk_live_` followed by 22 base64url characters (spec §5). */
export const KEY_PATTERN = /^pk_live_[A-Za-z0-9_-]{22}$/;

/** SHA-256 of the key, hex: the only form in which a key is stored or compared. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** A fresh random key (132 bits of entropy). Shown once to the operator; never stored. */
export function generateKey(): string {
  return `pk_live_${randomBytes(17).toString('base64url').slice(0, 22)}`;
}

/** A fresh key id: short, random, not derived from the key, safe for logs and the admin CLI. */
export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('base64url').replace(/[-_]/g, 'x').slice(0, 10)}`;
}
