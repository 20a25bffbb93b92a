/**
 * The request line's CloudWatch metrics, carried by the line itself in the embedded metric format (EMF): no
 * call on the request path, CloudWatch Logs extracts them when it ingests the line. On when the stack sets
 * `METRICS_NAMESPACE` (infra/proxy-function.ts), off locally. The line gains its status class and the function
 * version (the metrics' dimensions) and one `_aws` directive: `latency_ms` is the metric (its sample count is
 * the request count), by route and status class, by function version and status class (what a deploy's alarms
 * watch), and by status class; an execution environment's first line also counts a cold start, by version.
 * infra/request-metrics.ts names the same metrics for the dashboard and the alarms (test/infra checks both
 * agree).
 */
import { isoMillis } from './time.js';

/** A metric namespace CloudWatch accepts (and not one of AWS's own): letters, digits and `.-_/#:`. */
const NAMESPACE = /^(?!AWS\/)[0-9A-Za-z.\-_/#:]{1,255}$/;

/** The metrics and their dimension sets, as the directives name them. */
export const REQUEST_METRICS = {
  latency: 'latency_ms',
  dimensions: [['route', 'status_class'], ['version', 'status_class'], ['status_class']],
  /** Counted on an environment's first line, by version only (one metric per version, not per route). */
  coldStart: 'cold_start',
  coldStartDimensions: [['version']],
} as const;

/**
 * The status class a request line counts under: 304 and 429 on their own (revalidations and quota refusals
 * are not failures of their class), every other status by its hundred.
 * @example statusClass(206) === '2xx'
 * @example statusClass(429) === '429'
 */
export function statusClass(status: number): string {
  return status === 304 || status === 429 ? String(status) : `${Math.trunc(status / 100)}xx`;
}

/** What a request line is made of, as far as its metrics go. */
interface MeteredLine {
  time: string;
  route: string;
  status: number;
}

/** Whether `line` is a request line (problem lines carry neither a status nor a route). */
function isMetered(line: object): line is MeteredLine {
  const { time, route, status } = line as Partial<MeteredLine>;
  return typeof status === 'number' && typeof route === 'string' && typeof time === 'string';
}

/** The EMF part of the lines of one execution environment: the same directive, but for its time. */
export class RequestMetrics {
  readonly #warm: string;
  readonly #cold: string;
  #first = true;

  constructor(namespace: string, version: string) {
    // No Unit: 22 bytes a line for a label the dashboard's titles carry ("ms").
    const directive = (dimensions: readonly (readonly string[])[], name: string) =>
      JSON.stringify({ Namespace: namespace, Dimensions: dimensions, Metrics: [{ Name: name }] });
    const latency = directive(REQUEST_METRICS.dimensions, REQUEST_METRICS.latency);
    const coldStart = directive(REQUEST_METRICS.coldStartDimensions, REQUEST_METRICS.coldStart);
    const tail = (directives: string) =>
      `,"version":${JSON.stringify(version)},"_aws":{"CloudWatchMetrics":[${directives}],"Timestamp":`;
    this.#warm = tail(latency);
    this.#cold = `,"${REQUEST_METRICS.coldStart}":1${tail(`${latency},${coldStart}`)}`;
  }

  /**
   * `json` (`line` serialised) with its metrics appended, or as it is when `line` is not a request line. The
   * metrics' time is the line's (the request's start).
   * @example metrics.line('{"time":"1970-01-01T00:00:00.000Z","route":"/v1/tags","status":200,"latency_ms":3}', line)
   *   // → '{…,"latency_ms":3,"status_class":"2xx","version":"7","_aws":{"CloudWatchMetrics":[…],"Timestamp":0}}'
   */
  line(json: string, line: object): string {
    if (!isMetered(line)) return json;
    const tail = this.#first ? this.#cold : this.#warm;
    this.#first = false;
    return `${json.slice(0, -1)},"status_class":"${statusClass(line.status)}"${tail}${isoMillis(line.time)}}}`;
  }
}

/**
 * The request metrics of this environment: on when `METRICS_NAMESPACE` names a namespace CloudWatch accepts,
 * under the function version Lambda runs (`AWS_LAMBDA_FUNCTION_VERSION`).
 * @example requestMetrics({ METRICS_NAMESPACE: 'CatalogueReadApi/Api', AWS_LAMBDA_FUNCTION_VERSION: '7' })
 */
export function requestMetrics(env: NodeJS.ProcessEnv): RequestMetrics | undefined {
  const namespace = env.METRICS_NAMESPACE;
  if (namespace === undefined || !NAMESPACE.test(namespace)) return undefined;
  return new RequestMetrics(namespace, env.AWS_LAMBDA_FUNCTION_VERSION ?? '$LATEST');
}
