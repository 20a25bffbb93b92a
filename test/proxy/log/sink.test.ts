/**
 * The log sink: lines reach stdout once per event-loop turn, in order, whole; nothing waits past the turn,
 * a large backlog is written at once, and the Lambda adapter writes its invocation's line before it returns.
 */
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import {
  createLambdaHandler,
  type FunctionUrlEvent,
  type LambdaRuntime,
} from '../../../proxy/adapters/lambda.js';
import { flushLog, logJson } from '../../../proxy/log/sink.js';

let writes: string[];
let spy: MockInstance;

beforeEach(() => {
  flushLog();
  writes = [];
  spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    writes.push(String(chunk));
    return true;
  });
});

afterEach(() => {
  flushLog();
  spy.mockRestore();
});

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('logJson', () => {
  it('writes the lines of one turn in one call, in order, one JSON object per line', async () => {
    for (let i = 0; i < 5; i++) logJson({ request_id: `req_${i}`, status: 200 });
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toHaveLength(1);
    const lines = writes[0]!.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line).request_id)).toEqual([
      'req_0',
      'req_1',
      'req_2',
      'req_3',
      'req_4',
    ]);
  });

  it('lines of the next turn are a write of their own', async () => {
    logJson({ n: 1 });
    await turn();
    logJson({ n: 2 });
    await turn();
    expect(writes).toEqual(['{"n":1}\n', '{"n":2}\n']);
  });

  it('writes a backlog of 64 KB at once, without waiting for the turn to end', () => {
    const message = 'x'.repeat(1000);
    for (let i = 0; i < 70; i++) logJson({ i, message });
    expect(writes.length).toBe(1);
    expect(writes[0]!.split('\n').length - 1).toBeGreaterThanOrEqual(64);
    flushLog();
    const lines = writes.join('').split('\n').slice(0, -1);
    expect(lines.map((line) => JSON.parse(line).i)).toEqual([...Array(70).keys()]);
  });

  it('flushLog writes what waits now, and nothing when nothing waits', () => {
    flushLog();
    expect(writes).toEqual([]);
    logJson({ status: 503 });
    flushLog();
    expect(writes).toEqual(['{"status":503}\n']);
  });
});

describe('the Lambda adapter', () => {
  const runtime: LambdaRuntime = {
    streamifyResponse: (handler) => handler,
    HttpResponseStream: { from: (stream) => stream },
  };
  const event: FunctionUrlEvent = {
    rawPath: '/v1/tags',
    rawQueryString: '',
    headers: {},
    requestContext: { http: { method: 'GET' } },
  };
  const sink = () =>
    new Writable({
      write(_chunk, _encoding, callback) {
        callback();
      },
    });

  it('has written the invocation’s log line when it returns, whether the core answers or throws', async () => {
    const answering = createLambdaHandler(async () => {
      logJson({ request_id: 'req_answered' });
      return { status: 304, headers: {}, body: undefined };
    }, runtime);
    await answering(event, sink());
    expect(writes).toEqual(['{"request_id":"req_answered"}\n']);

    const failing = createLambdaHandler(async () => {
      logJson({ request_id: 'req_failed' });
      throw new Error('bug');
    }, runtime);
    await expect(failing(event, sink())).rejects.toThrow('bug');
    expect(writes.at(-1)).toBe('{"request_id":"req_failed"}\n');
  });
});
