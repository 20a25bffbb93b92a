/**
 * Request ids (`req_` + 16 random base64url characters) of both APIs, the public one (proxy/) and key
 * administration's (admin/): in the error envelope, the `X-Request-Id` header and the request's log or audit
 * line. (The edge's own 401s carry CloudFront's id instead, infra/viewer-request.js, to be found in its logs.) Drawn in blocks: one `randomBytes` call and one base64url encoding per 128 ids.
 * 12 random bytes are exactly 16 base64url characters, so each id is its own slice of the encoded block.
 */
import { randomBytes } from 'node:crypto';

const ID_CHARS = 16;
const IDS_PER_BLOCK = 128;
let idBlock = '';
let idAt = 0;

/**
 * A fixed request id, for an answer that is not a request's own (a broken socket's last answer).
 * @example fixedRequestId('unknown') // → 'req_unknown'
 */
export const fixedRequestId = (name: string) => `req_${name}`;

/**
 * A fresh request id.
 * @example newRequestId() // → 'req_3q2-7wQk0ZbLx1aP'
 */
export function newRequestId(): string {
  if (idAt >= idBlock.length) {
    idBlock = randomBytes((IDS_PER_BLOCK * ID_CHARS * 3) / 4).toString('base64url');
    idAt = 0;
  }
  idAt += ID_CHARS;
  return `req_${idBlock.slice(idAt - ID_CHARS, idAt)}`;
}
