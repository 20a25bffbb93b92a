/**
 * The request line's embedded metrics: every line is a valid EMF document (the specification's rules, checked
 * below), its dimensions and metric are the line's own members, the first line of an execution environment
 * counts a cold start and no other does, problem lines stay as they were, and nothing is added where
 * METRICS_NAMESPACE is not set (locally) or is not a namespace CloudWatch takes.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RequestMetrics, requestMetrics, statusClass } from '../../../proxy/log/metrics.js';

type Json = Record<string, unknown>;

/**
 * The problems of `line` as an EMF document (CloudWatch's specification of the embedded metric format): a
 * root `_aws` with a millisecond `Timestamp` and `CloudWatchMetrics` directives, each with a namespace, dimension
 * sets of at most 30 names that are string members of the root, and metrics (at most 100) that are number
 * members of the root.
 */
function emfProblems(line: Json): string[] {
  const problems: string[] = [];
  const aws = line._aws as Json | undefined;
  if (typeof aws !== 'object' || aws === null) return ['no _aws object'];
  if (!Number.isInteger(aws.Timestamp)) problems.push('Timestamp is not an integer');
  const directives = aws.CloudWatchMetrics as Json[];
  if (!Array.isArray(directives) || directives.length === 0) return [...problems, 'no directive'];
  for (const directive of directives) {
    if (typeof directive.Namespace !== 'string' || directive.Namespace === '') problems.push('no Namespace');
    for (const set of directive.Dimensions as string[][]) {
      if (set.length > 30) problems.push('a dimension set of more than 30');
      for (const name of set)
        if (typeof line[name] !== 'string') problems.push(`dimension ${name} is not a string member`);
    }
    const metrics = directive.Metrics as { Name: string }[];
    if (metrics.length > 100) problems.push('more than 100 metrics');
    for (const { Name } of metrics)
      if (typeof line[Name] !== 'number') problems.push(`metric ${Name} is not a number member`);
  }
  return problems;
}

const requestLine = (status: number, route = '/v1/modules', time = '2026-06-01T12:00:00.123Z') => ({
  time,
  request_id: 'req_AAAAAAAAAAAAAAAA',
  method: 'GET',
  route,
  status,
  latency_ms: 12.5,
  bytes: 321,
  key_id: 'key_x',
});

const withMetrics = (metrics: RequestMetrics, line: object): Json =>
  JSON.parse(metrics.line(JSON.stringify(line), line));

describe('statusClass', () => {
  it('counts 304 and 429 on their own and every other status by its hundred', () => {
    expect([200, 206, 304, 400, 401, 404, 429, 500, 503, 505].map(statusClass)).toEqual([
      '2xx',
      '2xx',
      '304',
      '4xx',
      '4xx',
      '4xx',
      '429',
      '5xx',
      '5xx',
      '5xx',
    ]);
  });
});

describe('a request line with its metrics', () => {
  it('is a valid EMF document whose dimensions and metric are its own members, for any status, route and time', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 599 }),
        fc.string(),
        fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }),
        (status, route, date) => {
          const metrics = new RequestMetrics('CatalogueReadApi/Api', '7');
          const line = requestLine(status, route, date.toISOString());

          const out = withMetrics(metrics, line);

          expect(emfProblems(out)).toEqual([]);
          expect(out).toMatchObject({ ...line, status_class: statusClass(status), version: '7' });
          expect((out._aws as Json).Timestamp).toBe(date.getTime());
        },
      ),
    );
  });

  it('keeps the line first and whole: its fields in order, then status class, version and the directive', () => {
    const metrics = new RequestMetrics('CatalogueReadApi/Api', '12');
    metrics.line('{}', requestLine(200));
    const line = requestLine(503);
    const json = JSON.stringify(line);

    const out = metrics.line(json, line);

    expect(out.startsWith(json.slice(0, -1))).toBe(true);
    expect(Object.keys(JSON.parse(out))).toEqual([...Object.keys(line), 'status_class', 'version', '_aws']);
    expect(JSON.parse(out)._aws).toEqual({
      CloudWatchMetrics: [
        {
          Namespace: 'CatalogueReadApi/Api',
          Dimensions: [['route', 'status_class'], ['version', 'status_class'], ['status_class']],
          Metrics: [{ Name: 'latency_ms' }],
        },
      ],
      Timestamp: Date.parse(line.time),
    });
  });

  it('counts a cold start on the first line of the environment and on no other', () => {
    const metrics = new RequestMetrics('CatalogueReadApi/Api', '3');

    const [first, second, third] = [200, 304, 429].map((status) => withMetrics(metrics, requestLine(status)));

    expect(first!.cold_start).toBe(1);
    expect(emfProblems(first!)).toEqual([]);
    expect((first!._aws as Json).CloudWatchMetrics).toEqual([
      expect.objectContaining({ Metrics: [{ Name: 'latency_ms' }] }),
      {
        Namespace: 'CatalogueReadApi/Api',
        Dimensions: [['version']],
        Metrics: [{ Name: 'cold_start' }],
      },
    ]);
    for (const line of [second!, third!]) {
      expect(line).not.toHaveProperty('cold_start');
      expect((line._aws as Json).CloudWatchMetrics).toEqual([
        expect.objectContaining({ Metrics: [{ Name: 'latency_ms' }] }),
      ]);
    }
  });

  it('leaves a problem line as it was, and does not spend the cold start on it', () => {
    const metrics = new RequestMetrics('CatalogueReadApi/Api', '3');
    const problem = { time: '2026-06-01T12:00:00.000Z', level: 'error', message: 'configuration incomplete' };

    expect(metrics.line(JSON.stringify(problem), problem)).toBe(JSON.stringify(problem));
    expect(withMetrics(metrics, requestLine(503)).cold_start).toBe(1);
  });
});

describe('requestMetrics', () => {
  it('is off without METRICS_NAMESPACE, or with a namespace CloudWatch refuses', () => {
    for (const namespace of [undefined, '', 'AWS/Lambda', 'has space', 'x'.repeat(256), 'quote"d']) {
      expect(requestMetrics({ METRICS_NAMESPACE: namespace }), String(namespace)).toBeUndefined();
    }
  });

  it('runs under the function version Lambda runs, $LATEST outside a published version', () => {
    const line = requestLine(200);
    const versioned = requestMetrics({ METRICS_NAMESPACE: 'A/b', AWS_LAMBDA_FUNCTION_VERSION: '42' })!;
    const unversioned = requestMetrics({ METRICS_NAMESPACE: 'A/b' })!;

    expect(withMetrics(versioned, line).version).toBe('42');
    expect(withMetrics(unversioned, line).version).toBe('$LATEST');
  });
});

describe('the log sink', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
    vi.restoreAllMocks();
  });

  /** The lines logJson writes for `lines`, with the sink loaded under `env`. */
  async function written(env: Record<string, string>, lines: object[]): Promise<Json[]> {
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    vi.resetModules();
    const { flushLog, logJson } = await import('../../../proxy/log/sink.js');
    const writes: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    for (const line of lines) logJson(line);
    flushLog();
    return writes
      .join('')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
  }

  it('adds the metrics to request lines where the stack sets METRICS_NAMESPACE', async () => {
    const problem = { time: '2026-06-01T12:00:00.000Z', level: 'error', message: 'secret not read' };
    const lines = await written(
      { METRICS_NAMESPACE: 'CatalogueReadApi/Api', AWS_LAMBDA_FUNCTION_VERSION: '5' },
      [problem, requestLine(200), requestLine(500)],
    );

    expect(lines[0]).toEqual(problem);
    expect(lines.slice(1).map((line) => [line.status_class, line.version, line.cold_start])).toEqual([
      ['2xx', '5', 1],
      ['5xx', '5', undefined],
    ]);
    for (const line of lines.slice(1)) expect(emfProblems(line)).toEqual([]);
  });

  it('writes the lines as they are without it (npm start)', async () => {
    vi.stubEnv('METRICS_NAMESPACE', undefined);

    expect(await written({}, [requestLine(200)])).toEqual([requestLine(200)]);
  });
});
