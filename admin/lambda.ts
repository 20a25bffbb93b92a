/**
 * The admin function's entry (infra/admin.ts bundles it): settings from the environment the stack sets, lean
 * signed DynamoDB calls (aws/dynamodb.ts: aws4 over node:http, no SDK in the bundle) with the function role's
 * credentials, and one audit line per call on stdout (CloudWatch Logs). A configuration problem answers 503
 * and is logged; it never crashes the function.
 */
import { LeanDynamo } from '../aws/dynamodb.js';
import { awsRegion, endpointSetting, roleCredentials } from '../aws/env.js';
import { errorMessage } from '../store/errors.js';
import { newRequestId } from '../store/request-id.js';
import { AdminTables } from './dynamo.js';
import { createAdminHandler } from './http/handler.js';
import { type FunctionUrlEvent, type FunctionUrlResult, requestOf, resultOf } from './http/lambda.js';
import { adminSettings } from './settings.js';

let handle: ((event: FunctionUrlEvent) => Promise<FunctionUrlResult>) | undefined;

function create(): (event: FunctionUrlEvent) => Promise<FunctionUrlResult> {
  const settings = adminSettings(process.env);
  const endpoint = endpointSetting('dynamodb')?.value;
  const tables = new AdminTables({
    dynamo: new LeanDynamo({ endpoint, region: awsRegion(), credentials: roleCredentials(endpoint) }),
    keysTable: settings.keysTable,
    countersTable: settings.countersTable,
  });
  const core = createAdminHandler({
    context: { tables, settings, now: () => new Date() },
    log: (line) => process.stdout.write(`${JSON.stringify(line)}\n`),
  });
  return async (event) => resultOf(await core(requestOf(event)));
}

export async function handler(event: FunctionUrlEvent): Promise<FunctionUrlResult> {
  try {
    handle ??= create();
  } catch (error) {
    const requestId = newRequestId();
    const line = {
      level: 'error',
      type: 'admin_audit',
      request_id: requestId,
      outcome: 'configuration_error',
    };
    process.stdout.write(`${JSON.stringify({ ...line, error: errorMessage(error) })}\n`);
    return {
      statusCode: 503,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'x-request-id': requestId,
        'retry-after': '30',
      },
      body: JSON.stringify({
        error: {
          code: 'service_unavailable',
          message: 'The key-administration API is not configured.',
          request_id: requestId,
        },
      }),
    };
  }
  return handle(event);
}
