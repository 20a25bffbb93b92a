/**
 * The target of `versions`, `rollback` and `unlock` when `--out` names none: this checkout's running `npm start`,
 * found as `upload` finds it (aws/local-stack.ts, findLocalStack): the catalogue it serves, in its local S3. An
 * explicit `--out` (with its `--endpoint`) always wins; without one and without a running `npm start`, the
 * command refuses, saying both ways to go on.
 */
import { findLocalStack } from '../aws/local-stack.js';

export interface TargetChoice {
  /** `--out`'s form: a directory or `s3://bucket/prefix`. */
  out: string;
  endpoint: string | undefined;
  /** When it is npm start's: what to say of it before the command's own output. */
  local?: string;
}

/** No target: said in one line (exit 3, nothing read or written). */
export class NoTargetError extends Error {
  override name = 'NoTargetError';
}

/**
 * `--out` and `--endpoint` as given, or npm start's catalogue.
 * @example await chooseTarget(undefined, undefined, { env: process.env, root: '.' }, 'versions')
 *   // → { out: 's3://catalogue', endpoint: 'http://127.0.0.1:41234', local: "no --out: this checkout's npm start, …" }
 */
export async function chooseTarget(
  out: string | undefined,
  endpoint: string | undefined,
  where: { env: Record<string, string | undefined>; root: string },
  command: string,
): Promise<TargetChoice> {
  if (out !== undefined) return { out, endpoint };
  if (endpoint !== undefined) {
    throw new RangeError(
      '--endpoint goes with --out: without --out the target is npm start’s, endpoint and all',
    );
  }
  const found = await findLocalStack(where.env, where.root, 's3');
  if (!found.ok) {
    throw new NoTargetError(
      `${command}: ${found.problem}: start it (npm start) in another shell, or name the target with --out DIR or --out s3://BUCKET/PREFIX (and --endpoint URL)`,
    );
  }
  const { stack } = found;
  const target = `s3://${stack.bucket}${stack.prefix ? `/${stack.prefix.replace(/\/+$/, '')}` : ''}`;
  return {
    out: target,
    endpoint: stack.s3,
    local: `no --out: this checkout's npm start, ${target} in its local S3 at ${stack.s3} (data directory ${found.directory})`,
  };
}
