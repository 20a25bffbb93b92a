/**
 * The exit codes of `npm run catalogue` (docs/publishing.md, "Exit codes"): 0 ok, 1 validation failed, 2 usage,
 * 3 publish failed, 4 another publish holds the target, 5 a rollback or a retry refused, 6 an upload superseded
 * by a newer one, 7 no report for an upload in time, 8 `failed` found uploads that failed or got no report,
 * 130 and 143 an upload's waiting interrupted (SIGINT, SIGTERM); a new outcome gets a new code.
 */
export const EXIT = {
  ok: 0,
  invalid: 1,
  usage: 2,
  publishFailed: 3,
  busy: 4,
  refused: 5,
  superseded: 6,
  timedOut: 7,
  failedUploads: 8,
  /** `upload`: Ctrl-C (SIGINT) while waiting for the report: 128 + 2, as a shell says it. */
  interrupted: 130,
  /** `upload`: SIGTERM (a CI cancelling the job) while waiting: 128 + 15. */
  terminated: 143,
} as const;

/**
 * Who runs this publish, as the version records it: `user@host`.
 * @example whoAmI() // → 'alice@laptop'
 */
export function whoAmI(): string {
  let user: string | undefined;
  try {
    user = process.getBuiltinModule('node:os').userInfo().username;
  } catch {
    user = process.env.USER ?? process.env.USERNAME;
  }
  return `${user || 'someone'}@${process.getBuiltinModule('node:os').hostname()}`;
}
