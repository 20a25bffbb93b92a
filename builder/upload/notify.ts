/**
 * The event of an upload's outcome on an EventBridge bus (the account's default bus unless named), one
 * PutEvents call signed by aws/signed.ts (no SDK client for one call a publish). The publisher's application
 * subscribes with a rule on `source` (report.ts EVENT_SOURCE) and, if it likes, `detail-type`.
 */
import { type CredentialSource, SignedClient } from '../../aws/signed.js';
import { DETAIL_TYPES, EVENT_SOURCE, eventDetail, type UploadReport } from './report.js';

export interface EventBusOptions {
  region: string;
  /** The bus's name or ARN (default: `default`). */
  busName?: string;
  /** AWS's endpoint when absent (`AWS_ENDPOINT_URL_EVENTBRIDGE` in tests). */
  endpoint?: string;
  credentials: CredentialSource;
}

/** A bus to send upload outcomes to: `send(report)` resolves once EventBridge accepted the event. */
export function uploadEventBus(options: EventBusOptions): { send(report: UploadReport): Promise<void> } {
  const client = new SignedClient({
    origin: options.endpoint ?? `https://events.${options.region}.amazonaws.com`,
    service: 'events',
    region: options.region,
    credentials: options.credentials,
    connections: 1,
  });
  return {
    async send(report) {
      const entry = {
        Source: EVENT_SOURCE,
        DetailType: DETAIL_TYPES[report.outcome],
        Detail: JSON.stringify(eventDetail(report)),
        EventBusName: options.busName ?? 'default',
      };
      const response = await client.request({
        method: 'POST',
        path: '/',
        headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AWSEvents.PutEvents' },
        body: JSON.stringify({ Entries: [entry] }),
        retryOnReset: true,
        signal: AbortSignal.timeout(10_000),
        errorCode: ({ status, body }) => {
          if (status === 200) return undefined;
          return (
            (JSON.parse(body.toString() || '{}') as { __type?: string }).__type?.split('#').pop() ??
            `HTTP ${status}`
          );
        },
      });
      const answer = JSON.parse(response.body.toString() || '{}') as {
        FailedEntryCount?: number;
        Entries?: { ErrorCode?: string; ErrorMessage?: string }[];
      };
      if (response.status !== 200 || (answer.FailedEntryCount ?? 0) > 0) {
        const failure = answer.Entries?.[0];
        throw new Error(
          `EventBridge PutEvents failed (HTTP ${response.status}${failure?.ErrorCode ? `, ${failure.ErrorCode}: ${failure.ErrorMessage}` : ''})`,
        );
      }
    },
  };
}
