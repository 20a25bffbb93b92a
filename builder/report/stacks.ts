/**
 * Stack traces of the upload builder's Lambda function in the repository's terms, at no cost at start: the
 * function runs without `--enable-source-maps` (which parses the bundle's source map when the bundle loads:
 * +357 ms and +8.3 MB at every cold start, measured under the runtime interface client, bench section 11),
 * and when an invocation fails, the error's stack is mapped through the bundle's `.map` file, read and
 * parsed then (once per execution environment) by Node's own `module.SourceMap`. Turning source maps on at
 * that moment would not help: Node maps only the files loaded after it (`module.setSourceMapsSupport`).
 */
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { fileURLToPath } from 'node:url';

/** `    at name (location:line:column)` or `    at location:line:column`. */
const FRAME = /^(\s*at )(?:(.+?) \()?(.+?):(\d+):(\d+)(\)?)$/;

/** A stack's text → the same stack with the bundle's frames in source terms. */
export type StackMapper = (stack: string) => string;

interface Frame {
  at: string;
  name: string | undefined;
  location: string;
  line: number;
  column: number;
}

function parseFrame(text: string): Frame | undefined {
  const match = FRAME.exec(text);
  if (!match) return undefined;
  return {
    at: match[1]!,
    name: match[2],
    location: match[3]!,
    line: Number(match[4]),
    column: Number(match[5]),
  };
}

/** The source map of `bundleUrl` (its `.map` beside it), or undefined when there is none or it is unreadable. */
function loadSourceMap(bundleUrl: string): SourceMap | undefined {
  try {
    const payload = JSON.parse(readFileSync(`${fileURLToPath(bundleUrl)}.map`, 'utf8')) as SourceMapPayload;
    return new SourceMap(payload);
  } catch {
    return undefined;
  }
}

/** A source path as the map names it (relative to the bundle's directory), as a path of the repository. */
const repositoryPath = (fileName: string) => fileName.replace(/^(?:\.\.\/)+/, '');

/**
 * A mapper of stacks through the source map of the bundle at `bundleUrl` (the entry's `import.meta.url`),
 * read the first time a stack has one of the bundle's frames. Frames elsewhere (Node's own, the runtime's)
 * and frames the map does not cover are kept as they are; without a map (a test run from the sources) every
 * stack is returned unchanged. A minified function name is replaced by the original one when the map names
 * it at the caller's position (as Node's `--enable-source-maps` does).
 * @example
 * const mapStack = stackMapper(import.meta.url);
 * mapStack('Error: x\n    at e (file:///var/task/index.mjs:1:28)') // → 'Error: x\n    at deep (builder/upload/archive.ts:3:10)'
 */
export function stackMapper(bundleUrl: string): StackMapper {
  const bundlePath = fileURLToPath(bundleUrl);
  const inBundle = (location: string) => location === bundleUrl || location === bundlePath;
  let map: SourceMap | undefined | null = null;
  return (stack) => {
    const lines = stack.split('\n');
    const frames = lines.map(parseFrame);
    if (!frames.some((frame) => frame && inBundle(frame.location))) return stack;
    if (map === null) map = loadSourceMap(bundleUrl);
    const sourceMap = map;
    if (!sourceMap) return stack;
    return lines
      .map((text, index) => {
        const frame = frames[index];
        if (!frame || !inBundle(frame.location)) return text;
        const origin = sourceMap.findOrigin(frame.line, frame.column);
        if (!('fileName' in origin)) return text;
        // The function's original name is the one the map gives its caller's call site.
        const caller = frames[index + 1];
        const callSite =
          caller && inBundle(caller.location) ? sourceMap.findEntry(caller.line - 1, caller.column - 1) : {};
        const called = ('name' in callSite && callSite.name) || frame.name;
        const location = `${repositoryPath(origin.fileName)}:${origin.lineNumber}:${origin.columnNumber}`;
        return called ? `${frame.at}${called} (${location})` : `${frame.at}${location}`;
      })
      .join('\n');
  };
}

/**
 * `handler`, with the stack of every error it throws (and of the errors' causes) mapped by {@link stackMapper}
 * before the runtime logs it.
 * @example export const handler = withMappedStacks(handle, import.meta.url);
 */
export function withMappedStacks<Event, Context, Result>(
  handler: (event: Event, context: Context) => Promise<Result>,
  bundleUrl: string,
): (event: Event, context: Context) => Promise<Result> {
  const mapStack = stackMapper(bundleUrl);
  return async (event, context) => {
    try {
      return await handler(event, context);
    } catch (error) {
      for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
        if (cause.stack) cause.stack = mapStack(cause.stack);
        cause = cause.cause;
      }
      throw error;
    }
  };
}
