/**
 * Reading V8 CPU profiles (.cpuprofile, from `node --cpu-prof` or the inspector): self time by function and
 * by file, so RESULTS.md can say where the time goes when a target is missed.
 */
import { readFileSync } from 'node:fs';
import { REPO } from './settings.js';
import { fmt, table } from './stats.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalMs: number;
  functions: { name: string; where: string; ms: number; share: number }[];
  /** Self time by file (node_modules grouped by package). */
  files: { file: string; ms: number; share: number }[];
  /** Time with at least one frame of the file (or package) on the stack. */
  inclusive: { file: string; ms: number; share: number }[];
}

/** A file, or the package a node_modules file belongs to. */
function fileKey(url: string): string {
  const path = shortUrl(url);
  const match = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  return match ? `${match[1]} (package)` : path;
}

function shortUrl(url: string): string {
  if (!url) return '(native)';
  let path = url.replace(/^file:\/\//, '');
  if (path.startsWith(REPO)) path = path.slice(REPO.length);
  const modules = path.lastIndexOf('node_modules/');
  if (modules >= 0) path = path.slice(modules);
  return path.replace(/\?.*$/, '');
}

/** Self time per function and per file; `(idle)` is left out of the shares. */
export function summarizeProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const functions = new Map<string, { name: string; where: string; ms: number }>();
  const files = new Map<string, number>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map<string, number>();
  // Samples of the bench's own profiler plumbing (serialising the profile at Profiler.stop) are left out.
  const harness = new Set<number>();
  for (let i = 0; i < profile.samples.length; i++) {
    for (let id: number | undefined = profile.samples[i]!; id !== undefined; id = parent.get(id)) {
      if (byId.get(id)!.callFrame.url.includes('bench/servers/child.ts')) {
        harness.add(i);
        break;
      }
    }
  }
  for (let i = 0; i < profile.samples.length; i++) {
    let id: number | undefined = profile.samples[i]!;
    if (byId.get(id)!.callFrame.functionName === '(idle)' || harness.has(i)) continue;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const seen = new Set<string>();
    for (; id !== undefined; id = parent.get(id)) {
      const { url } = byId.get(id)!.callFrame;
      if (!url) continue;
      const key = fileKey(url);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + ms);
    }
  }
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    if (harness.has(i)) continue;
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  let total = 0;
  for (const [id, ms] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    total += ms;
    // Lines of TypeScript files are lines of tsx's transpiled output, not of the source: name the file only.
    const where = url ? `${shortUrl(url)}${url.endsWith('.ts') ? '' : `:${lineNumber + 1}`}` : '';
    const name = functionName || '(anonymous)';
    const key = `${name}@${where}`;
    const entry = functions.get(key) ?? { name, where, ms: 0 };
    entry.ms += ms;
    functions.set(key, entry);
    const file = url ? fileKey(url) : name;
    files.set(file, (files.get(file) ?? 0) + ms);
  }
  return {
    totalMs: total,
    functions: [...functions.values()]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, top)
      .map((f) => ({ ...f, share: f.ms / total })),
    files: [...files.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([file, ms]) => ({ file, ms, share: ms / total })),
    inclusive: [...inclusive.entries()]
      .filter(
        ([file]) => !file.startsWith('node:internal/process/') && !file.startsWith('node:internal/timers'),
      )
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([file, ms]) => ({ file, ms, share: ms / total })),
  };
}

export function profileTables(summary: ProfileSummary): string {
  return [
    `Busy (non-idle) time sampled: ${fmt.int(summary.totalMs)} ms. The sampler measures wall time between samples: on an oversubscribed machine, time the process spent descheduled lands on whatever ran last — system calls such as \`writev\` most often — so trust the CPU-per-response figures for totals and this profile for proportions within our code.`,
    '',
    'Top functions by self time:',
    '',
    table(
      ['function', 'where', 'self ms', 'share'],
      summary.functions.map((f) => [
        `\`${f.name}\``,
        f.where ? `\`${f.where}\`` : '',
        fmt.int(f.ms),
        fmt.pct(f.share),
      ]),
    ),
    '',
    'Self time by file:',
    '',
    table(
      ['file', 'self ms', 'share'],
      summary.files.map((f) => [`\`${f.file}\``, fmt.int(f.ms), fmt.pct(f.share)]),
    ),
    '',
    'Inclusive time by file (a sample counts for every file with a frame on its stack):',
    '',
    table(
      ['file', 'inclusive ms', 'share'],
      summary.inclusive.map((f) => [`\`${f.file}\``, fmt.int(f.ms), fmt.pct(f.share)]),
    ),
  ].join('\n');
}
