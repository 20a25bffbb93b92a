/**
 * The tables `npm run keys` acts on: those the environment names (KEYS_TABLE and COUNTERS_TABLE, with
 * DYNAMODB_ENDPOINT or AWS_ENDPOINT_URL_DYNAMODB for tables not on AWS), or, when it names none, this checkout's running
 * `npm start`'s, found as every command given no target finds it (aws/local-stack.ts, findLocalStack): its
 * tables on its local DynamoDB, nothing to type. Without either the command refuses, saying both ways.
 */
import { findLocalStack } from '../aws/local-stack.js';
import { ConfigurationError } from './errors.js';

type Env = Record<string, string | undefined>;

/** The variables that name the tables: any one of them set means the operator chose the target. */
const TARGET_VARIABLES = [
  'KEYS_TABLE',
  'COUNTERS_TABLE',
  'DYNAMODB_ENDPOINT',
  'AWS_ENDPOINT_URL_DYNAMODB',
] as const;

/**
 * `env` itself when it names a target, or `env` with npm start's tables and endpoint added, and what to say of
 * them (for stderr); a ConfigurationError (exit 2) when there is no target.
 * @example await keysTarget({}, '.') // → { env: { KEYS_TABLE: 'catalogue-keys', …, DYNAMODB_ENDPOINT: 'http://127.0.0.1:41235' }, note: "no KEYS_TABLE: …" }
 */
export async function keysTarget(env: Env, root: string): Promise<{ env: Env; note?: string }> {
  if (TARGET_VARIABLES.some((name) => env[name]?.trim())) return { env };
  const found = await findLocalStack(env, root, 'dynamodb');
  if (!found.ok) {
    throw new ConfigurationError(
      `${found.problem}: start it (npm start) in another shell, or name the tables with KEYS_TABLE and ` +
        'COUNTERS_TABLE (the stack’s outputs; with DYNAMODB_ENDPOINT for tables not on AWS)',
    );
  }
  const { stack } = found;
  return {
    env: {
      ...env,
      KEYS_TABLE: stack.keysTable,
      COUNTERS_TABLE: stack.countersTable,
      DYNAMODB_ENDPOINT: stack.dynamodb,
    },
    note: `no KEYS_TABLE, COUNTERS_TABLE or DYNAMODB_ENDPOINT: this checkout's npm start, tables ${stack.keysTable} and ${stack.countersTable} on its local DynamoDB at ${stack.dynamodb} (data directory ${found.directory})`,
  };
}
