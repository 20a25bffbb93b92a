/**
 * npm start's own servers (local/own-servers.ts): the layout setting, and endpoints that stay the same across
 * restarts on a data directory — the recorded port again while it is free, a new one (recorded, and said)
 * when another process holds it. In-process here, for speed; the threads layout runs in the npm start suites.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readEndpoints } from '../../aws/local-stack.js';
import { type OwnServerOptions, PRODUCT_S3, serverLayout, startOwnServers } from '../../local/own-servers.js';
import { OBJECTS_DIR } from '../../store/layout.js';
import { UPLOAD_PREFIXES } from '../../store/upload-prefixes.js';

const local = mkdtempSync(join(tmpdir(), 'cat-own-'));
afterAll(() => rmSync(local, { recursive: true, force: true }));
const notes: string[] = [];
const options: OwnServerOptions = {
  local,
  layout: 'in-process',
  onCrash: (error) => {
    throw error;
  },
  note: (line) => notes.push(line),
};

describe('serverLayout', () => {
  it('is threads unless in-process is asked for; anything else is refused', () => {
    expect(serverLayout(undefined)).toBe('threads');
    expect(serverLayout(' ')).toBe('threads');
    expect(serverLayout('in-process')).toBe('in-process');
    expect(() => serverLayout('processes')).toThrow(
      'CATALOGUE_LOCAL_SERVERS=processes is not a layout: use threads (the default) or in-process',
    );
  });
});

describe("what npm start asks of its own S3 (@catalogue/local-aws's options)", () => {
  it('keeps the uploaders of uploads, and the reserve from content objects (at any prefix) and uploads', () => {
    expect(PRODUCT_S3).toEqual({
      uploadsPrefix: UPLOAD_PREFIXES.incomingPrefix,
      bulk: { anyDepth: [OBJECTS_DIR], atRoot: [UPLOAD_PREFIXES.incomingPrefix] },
    });
  });
});

describe('own servers on a data directory', () => {
  it('listen on the same ports at every start, and move (and say so) only when a port is taken', async () => {
    const both = { bucket: 'catalogue', dynamodb: true };
    const first = await startOwnServers(both, options);
    const endpoints = { s3: first.s3!.endpoint, dynamodb: first.dynamodb!.endpoint };
    expect(readEndpoints(local)).toEqual(endpoints);
    await Promise.all([first.s3!.dispose(), first.dynamodb!.dispose()]);

    const again = await startOwnServers(both, options);
    expect({ s3: again.s3!.endpoint, dynamodb: again.dynamodb!.endpoint }).toEqual(endpoints);
    await Promise.all([again.s3!.dispose(), again.dynamodb!.dispose()]);
    expect(notes).toEqual([]);

    // Another process takes the local S3's port meanwhile.
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(first.s3!.port, '127.0.0.1', resolve));
    try {
      const moved = (await startOwnServers({ bucket: 'catalogue', dynamodb: false }, options)).s3!;
      await moved.dispose();
      expect(moved.port).not.toBe(first.s3!.port);
      expect(readEndpoints(local)).toEqual({ s3: moved.endpoint, dynamodb: endpoints.dynamodb });
      const [was, now] = [first.s3!.port, moved.port];
      expect(notes).toHaveLength(1);
      expect(notes[0]).toContain(
        `note: the local S3 listens on port ${now} now, not ${was} as before: port ${was} (kept in ` +
          `${join(local, 'endpoints.json')}) is in use by process ${process.pid} (`,
      );
      expect(notes[0]).toContain(
        `Lines exported with http://127.0.0.1:${was} no longer reach it; the lines below do, and later starts keep port ${now}.`,
      );
    } finally {
      squatter.close();
    }
  });
});
