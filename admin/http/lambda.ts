/**
 * The admin API behind a Lambda function URL with `AuthType: AWS_IAM` (buffered answers): the function URL
 * refuses unsigned or wrongly signed requests itself, and tells who signed in
 * `requestContext.authorizer.iam`; this adapter turns the event into the handler's request and its answer
 * into the function URL's result.
 */
import type { AdminRequest, AdminResponse } from './handler.js';

/** The parts of a function URL event (payload format 2.0) the admin API reads. */
export interface FunctionUrlEvent {
  rawPath?: string;
  rawQueryString?: string;
  headers?: Record<string, string | undefined>;
  body?: string;
  isBase64Encoded?: boolean;
  requestContext?: {
    http?: { method?: string };
    authorizer?: { iam?: { userArn?: string; accountId?: string; userId?: string; callerId?: string } };
  };
}

export interface FunctionUrlResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The handler's request for a function URL event.
 * @example requestOf({ rawPath: '/v1/keys', requestContext: { http: { method: 'GET' }, authorizer: { iam: { userArn } } } })
 */
export function requestOf(event: FunctionUrlEvent): AdminRequest {
  const iam = event.requestContext?.authorizer?.iam;
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
  return {
    method: event.requestContext?.http?.method ?? 'GET',
    path: event.rawPath ?? '/',
    query: event.rawQueryString ?? '',
    headers,
    body: Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8'),
    principal: iam?.userArn
      ? {
          arn: iam.userArn,
          ...(iam.accountId && { accountId: iam.accountId }),
          ...(iam.userId && { userId: iam.userId }),
        }
      : undefined,
    ...(!iam?.userArn && { refusal: 'The function URL passed no IAM caller: it must use AuthType AWS_IAM.' }),
  };
}

/** The function URL's result for the handler's answer. */
export function resultOf(response: AdminResponse): FunctionUrlResult {
  return { statusCode: response.status, headers: response.headers, body: response.body };
}
