/**
 * Every function reads as one idea: none in the product is over 75 lines counted first line to last, comments
 * and blank lines included, except the CDK constructors named below one by one (a construct's resources are
 * declared in its constructor, in the order CloudFormation reads them). Biome's 60-line rule counts fewer
 * lines (no blank ones); this bound catches what it lets through: long comments, and the exemptions of
 * `biome-ignore` comments, which only CDK constructors carry.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
/** Lines first to last, comments included. */
const MAX_LINES = 75;
/** The product's source files (tests, the benchmarks, fixtures, declarations and generated types aside). */
const SOURCE = /\.(ts|mjs)$/;
const NOT_SOURCE = /^(test|bench|fixtures|packages\/[^/]+\/test)\/|\.d\.ts$|^client\/openapi-types\.ts$/;

/**
 * The CDK constructors allowed past the bound, as `file class`: each declares a construct's resources. An entry
 * whose constructor is back under the bound fails too, so the list never outlives its reason.
 */
const CDK_CONSTRUCTORS = [
  'infra/admin.ts AdminApi',
  'infra/alarms.ts Alarms',
  'infra/edge.ts Edge',
  'infra/proxy-function.ts ProxyFunction',
  'infra/reference.ts ApiReference',
  'infra/upload-builder.ts UploadBuilder',
];

/** A function-like node with a body: where it is, its name and how many lines it spans. */
interface Measured {
  file: string;
  line: number;
  name: string;
  lines: number;
  /** `file class` for a constructor, as CDK_CONSTRUCTORS names it. */
  constructorOf?: string;
}

function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return '<anonymous>';
}

/**
 * Every function with a body in `text`, nested ones too, with its length first line to last.
 * @example measureFunctions('a.ts', 'function f() {\n  return 1;\n}\n') // → [{ file: 'a.ts', line: 1, name: 'f', lines: 3 }]
 */
function measureFunctions(file: string, text: string): Measured[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Measured[] = [];
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line;
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = lineOf(node.getStart(source));
      const measured: Measured = {
        file,
        line: first + 1,
        name: nameOf(node, source),
        lines: lineOf(node.end) - first + 1,
      };
      if (ts.isConstructorDeclaration(node) && ts.isClassLike(node.parent) && node.parent.name) {
        measured.constructorOf = `${file} ${node.parent.name.text}`;
      }
      found.push(measured);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The functions over the bound in `files` ({ file: text }), but the allowed constructors; and stale entries. */
function overTheBound(files: Record<string, string>, allowed: readonly string[]) {
  const measured = Object.entries(files).flatMap(([file, text]) => measureFunctions(file, text));
  const long = measured.filter((fn) => fn.lines > MAX_LINES);
  const exempt = (fn: Measured) => fn.constructorOf !== undefined && allowed.includes(fn.constructorOf);
  const longConstructors = new Set(long.filter(exempt).map((fn) => fn.constructorOf));
  return {
    over: long
      .filter((fn) => !exempt(fn))
      .map((fn) => `${fn.file}:${fn.line} ${fn.name} (${fn.lines} lines)`),
    stale: allowed.filter((entry) => !longConstructors.has(entry)),
  };
}

function productFiles(): Record<string, string> {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
  })
    .toString()
    .split('\n')
    .filter((file) => SOURCE.test(file) && !NOT_SOURCE.test(file));
  return Object.fromEntries(listed.map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]));
}

/** A function of `lines` lines first to last, all but its first and last a comment (Biome counts none of them). */
function commentedFunction(name: string, lines: number): string {
  const body = Array.from({ length: lines - 2 }, (_, i) => `  // line ${i + 2}`);
  return [`export function ${name}() {`, ...body, '}', ''].join('\n');
}

describe('functions read as one idea', () => {
  it(`no function in the product is over ${MAX_LINES} lines first to last, but the CDK constructors named`, () => {
    const { over, stale } = overTheBound(productFiles(), CDK_CONSTRUCTORS);
    expect(over, 'split these by concept').toEqual([]);
    expect(stale, 'back under the bound: remove them from CDK_CONSTRUCTORS').toEqual([]);
  });

  it('fails on a function one line over, comments counted, even in infra/ and in a nested function', () => {
    const files = {
      'builder/long.ts': commentedFunction('long', MAX_LINES + 1),
      'builder/fine.ts': commentedFunction('fine', MAX_LINES),
      'infra/nested.ts': `export const outer = () => {\n${commentedFunction('inner', MAX_LINES + 1)}};\n`,
    };
    expect(overTheBound(files, []).over).toEqual([
      `builder/long.ts:1 long (${MAX_LINES + 1} lines)`,
      `infra/nested.ts:1 outer (${MAX_LINES + 3} lines)`,
      `infra/nested.ts:2 inner (${MAX_LINES + 1} lines)`,
    ]);
  });

  it('exempts only a constructor named with its class and file', () => {
    const body = commentedFunction('x', MAX_LINES + 1)
      .split('\n')
      .slice(1, -2)
      .join('\n');
    const construct = `export class Stack {\n  constructor() {\n${body}\n  }\n  method() {\n${body}\n  }\n}\n`;
    const files = { 'infra/stack.ts': construct, 'infra/other.ts': construct.replace('Stack', 'Other') };
    const { over, stale } = overTheBound(files, ['infra/stack.ts Stack', 'infra/gone.ts Gone']);
    expect(over).toEqual([
      `infra/stack.ts:${MAX_LINES + 3} method (${MAX_LINES + 1} lines)`,
      `infra/other.ts:2 constructor (${MAX_LINES + 1} lines)`,
      `infra/other.ts:${MAX_LINES + 3} method (${MAX_LINES + 1} lines)`,
    ]);
    expect(stale).toEqual(['infra/gone.ts Gone']);
  });
});
