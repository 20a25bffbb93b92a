/**
 * `npm start`'s own S3 and DynamoDB servers: on a thread of their own (@catalogue/local-aws, threads.ts), or, with
 * CATALOGUE_LOCAL_SERVERS=in-process, on the proxy's thread as before (kept to compare the two: bench
 * section 12); each on the port recorded for the data directory (aws/local-stack.ts) while that is free.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  type LocalS3,
  type LocalServer,
  type S3Options,
  startDynamo,
  startS3,
  startServerThread,
} from '@catalogue/local-aws';
import {
  ENDPOINTS_FILE,
  type LocalService,
  readEndpoints,
  recordEndpoint,
  recordedPort,
} from '../aws/local-stack.js';
import { IDLE_CONNECTION } from '../proxy/adapters/http.js';
import { OBJECTS_DIR } from '../store/layout.js';
import { UPLOAD_PREFIXES } from '../store/upload-prefixes.js';
import { describeHolder, type PortHolder, portFree, portHolder } from './port.js';

export type ServerLayout = 'threads' | 'in-process';

/** CATALOGUE_LOCAL_SERVERS: `threads` (the default) or `in-process`. */
export function serverLayout(value: string | undefined): ServerLayout {
  const layout = value?.trim() || 'threads';
  if (layout === 'threads' || layout === 'in-process') return layout;
  throw new Error(
    `CATALOGUE_LOCAL_SERVERS=${value} is not a layout: use threads (the default) or in-process`,
  );
}

export interface OwnServerOptions {
  /** The data directory: the servers' data (`s3/`, `dynamodb/`) and their endpoints (`endpoints.json`). */
  local: string;
  layout: ServerLayout;
  /** The servers' thread stopped while serving: `npm start` reports it and exits. */
  onCrash: (error: Error) => void;
  /** A line for the user (stderr). */
  note: (line: string) => void;
}

/**
 * What the product asks of its own S3 beyond S3: the uploader of each upload kept (the report names them after a
 * restart), and a reserve of free space kept from bulk — a catalogue's content objects at any prefix, and uploads
 * — for the reports, locks, pointer and the local DynamoDB's journal.
 */
export const PRODUCT_S3: Pick<S3Options, 'uploadsPrefix' | 'bulk'> = {
  uploadsPrefix: UPLOAD_PREFIXES.incomingPrefix,
  bulk: { anyDepth: [OBJECTS_DIR], atRoot: [UPLOAD_PREFIXES.incomingPrefix] },
};

const LABELS: Record<LocalService, string> = { s3: 'the local S3', dynamodb: 'the local DynamoDB' };

/** Where a service is to listen: the endpoint recorded for the data directory, its port, and the port asked for. */
interface PortChoice {
  kept: string | undefined;
  keptPort: number | undefined;
  /** The recorded port, or 0 (any) when there is none or another process holds it. */
  port: number;
  /** What holds the recorded port, when it is taken. */
  holder?: PortHolder | 'unknown';
}

/** Where a service listens this time: its recorded port while free, else a new one (and what holds the old). */
async function choosePort(local: string, service: LocalService): Promise<PortChoice> {
  const kept = readEndpoints(local)[service];
  const keptPort = recordedPort(kept);
  if (keptPort === undefined || (await portFree(keptPort))) return { kept, keptPort, port: keptPort ?? 0 };
  return { kept, keptPort, port: 0, holder: portHolder(keptPort) ?? ('unknown' as const) };
}

/**
 * The servers `npm start` runs itself: the local S3 with `bucket` (data in `<data dir>/s3`) unless `bucket`
 * is undefined, the local DynamoDB (data in `<data dir>/dynamodb`) if `dynamodb`. Each listens on the port
 * of the last start on this data directory while it is free; a port another process holds is replaced by a
 * new one, recorded for later starts, and a note says so (lines exported before no longer reach it).
 */
export async function startOwnServers(
  wanted: { bucket: string | undefined; dynamodb: boolean },
  options: OwnServerOptions,
): Promise<{ s3?: LocalS3; dynamodb?: LocalServer }> {
  const { local } = options;
  // The proxy's idle connections: its own signed clients and the SDK's keep connections as they do with it.
  const idleConnection = { ...IDLE_CONNECTION };
  const s3 =
    wanted.bucket === undefined
      ? undefined
      : { bucket: wanted.bucket, directory: join(local, 's3'), idleConnection, ...PRODUCT_S3 };
  const dynamodb = wanted.dynamodb ? { directory: join(local, 'dynamodb'), idleConnection } : undefined;
  if (dynamodb) mkdirSync(dynamodb.directory, { recursive: true });
  const ports = {
    s3: s3 && (await choosePort(local, 's3')),
    dynamodb: dynamodb && (await choosePort(local, 'dynamodb')),
  };
  const asked = {
    ...(s3 && ports.s3 && { s3: { ...s3, port: ports.s3.port } }),
    ...(dynamodb && ports.dynamodb && { dynamodb: { ...dynamodb, port: ports.dynamodb.port } }),
  };
  let started: { s3?: LocalS3; dynamodb?: LocalServer };
  if (options.layout === 'threads') {
    started = await startServerThread(asked, { onCrash: options.onCrash });
  } else {
    started = {
      ...(asked.s3 && { s3: await startS3(asked.s3.bucket, asked.s3) }),
      ...(asked.dynamodb && { dynamodb: await startDynamo(asked.dynamodb) }),
    };
  }
  for (const service of ['s3', 'dynamodb'] as const) {
    const server = started[service];
    const chosen = ports[service];
    if (!server || !chosen) continue;
    if (server.endpoint !== chosen.kept) recordEndpoint(local, service, server.endpoint);
    if (chosen.holder) options.note(movedNote(local, service, chosen, server.port));
  }
  return started;
}

/** The note when a service could not have its recorded port (`chosen`): where it listens now (`port`), and why. */
function movedNote(local: string, service: LocalService, chosen: PortChoice, port: number): string {
  const { kept, keptPort, holder } = chosen;
  return (
    `note: ${LABELS[service]} listens on port ${port} now, not ${keptPort} as before: port ${keptPort} ` +
    `(kept in ${join(local, ENDPOINTS_FILE)}) is in use${describeHolder(holder === 'unknown' ? undefined : holder)}. ` +
    `Lines exported with ${kept} no longer reach it; the lines below do, and later starts keep port ${port}.`
  );
}
