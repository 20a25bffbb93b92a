/**
 * The upload builder's function as section 11 runs it (builder-function.ts, its publishes; builder-uploads.ts, its
 * bad and extreme uploads; builder-ab.ts, two assets side by side): the memory and heap flags Lambda gives it,
 * its environment, the S3 event of an upload, a loopback EventBridge, and a process's CPU and peak RSS.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { statusBytes } from './machine.js';
import { STACK_BUCKET } from './settings.js';

/** The function's memory as the stack sets it (infra/upload-builder.ts), and Lambda's heap flags for it. */
export const BUILDER_MEMORY_MB = 3008;
export const heapFlags = (memoryMb: number) => [
  `--max-semi-space-size=${Math.floor(memoryMb / 20)}`,
  `--max-old-space-size=${Math.round(memoryMb * 0.9)}`,
];

/** A loopback EventBridge that accepts PutEvents and keeps the entries. */
export async function startEventsStandIn(): Promise<{
  endpoint: string;
  entries: unknown[];
  close(): Promise<void>;
}> {
  const entries: unknown[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      entries.push(...(JSON.parse(body) as { Entries: unknown[] }).Entries);
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify({ FailedEntryCount: 0, Entries: [{ EventId: `e-${entries.length}` }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    entries,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** user + system CPU seconds and VmHWM of a live process, from /proc. */
export function processUsage(pid: number): { cpuSeconds: number; peakRssBytes: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const hz = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  return { cpuSeconds: ticks / hz, peakRssBytes: statusBytes(pid, 'VmHWM') ?? 0 };
}

/** The S3 event notification S3 sends for a completed PutObject of `key`. */
export function putEvent(key: string, size: number, etag: string) {
  return {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: 'us-east-1',
        eventTime: new Date().toISOString(),
        eventName: 'ObjectCreated:Put',
        userIdentity: { principalId: 'AWS:AROABENCH:ci' },
        s3: {
          bucket: { name: STACK_BUCKET },
          object: {
            key,
            size,
            eTag: etag.replace(/"/g, ''),
            sequencer: Date.now().toString(16).toUpperCase(),
          },
        },
      },
    ],
  };
}

/**
 * The function's environment as Lambda sets it (with the role's credentials, which the local S3 does not
 * know: the builder must sign its calls to a loopback S3 with the local ones) and as the stack configures it.
 */
export function builderEnv(at: {
  /** The catalogue's prefix (default `catalogue/`). */
  prefix?: string;
  api: string;
  taskRoot: string;
  tmp: string;
  s3Endpoint: string;
  eventsEndpoint: string;
}) {
  return {
    PATH: process.env.PATH ?? '',
    AWS_LAMBDA_RUNTIME_API: at.api,
    LAMBDA_TASK_ROOT: at.taskRoot,
    _HANDLER: 'index.handler',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'ASIABENCHROLEKEY00000',
    AWS_SECRET_ACCESS_KEY: 'bench-role-secret',
    AWS_SESSION_TOKEN: 'bench-role-session',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(BUILDER_MEMORY_MB),
    AWS_LAMBDA_FUNCTION_NAME: 'bench-upload-builder',
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/bench-upload-builder',
    AWS_LAMBDA_LOG_STREAM_NAME: 'bench',
    TMPDIR: at.tmp,
    CATALOGUE_BUCKET: STACK_BUCKET,
    CATALOGUE_PREFIX: at.prefix ?? 'catalogue/',
    INCOMING_PREFIX: 'incoming/',
    REPORTS_PREFIX: 'reports/',
    EVENT_BUS_NAME: 'default',
    BUILD_BUDGET_SECONDS: '600',
    S3_ENDPOINT: at.s3Endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: at.eventsEndpoint,
  };
}
