/**
 * What integrity costs (not part of npm test): per request on a cache miss, the SHA-256 of the bytes the
 * proxy checks — the index shard and the range (first page, cursor page, detail) — in µs; per publish, the
 * time of a full render (which computes the range digests) of the same catalogue. Run it on two trees to
 * compare: `npx tsx bench/integrity-cost.ts [modules]`.
 */
import { renderCatalogue } from '../builder/render/full.js';
import { generateSnapshot } from '../builder/synthetic/generate.js';
import { digest128 } from '../store/layout.js';
import { parsePointer, parseShard, shardOf } from '../store/pointer.js';
import { decodeSegment } from '../store/segments.js';

const MODULES = Number(process.argv[2] ?? 25_000);
const snapshot = generateSnapshot({ modules: MODULES, seed: 7 });

/** Median of `runs` timings of `task`, in µs. */
function medianMicros(task: () => void, runs = 200): number {
  for (let i = 0; i < 20; i++) task();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = process.hrtime.bigint();
    task();
    times.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

const renders: number[] = [];
let rendered = renderCatalogue(snapshot);
for (let i = 0; i < Number(process.env.RENDERS ?? 3); i++) {
  const started = performance.now();
  rendered = renderCatalogue(snapshot);
  renders.push(performance.now() - started);
}
const pointer = parsePointer(rendered.pointerBytes)!;
const shardOfKey = (key: string) =>
  rendered.objects.get(pointer.shards[shardOf(key, pointer.shards.length)]!)!;
const listKey = 'modules?sort=id';
const shardBytes = shardOfKey(listKey);
const entry = parseShard(shardBytes)![listKey] as [string, number, number];
const list = rendered.objects.get(entry[0])!;
const segment0 = list.subarray(0, entry[2]);
const first = decodeSegment(list, 0);
const pair = list.subarray(first.next[0], first.next[2]);
const detailId = rendered.index.modules[String(snapshot.modules[0]!.id)]!;
const detail = rendered.objects.get(detailId)!;

const rows: [string, number, number][] = [
  [
    'pointer (read when it changed)',
    rendered.pointerBytes.byteLength,
    medianMicros(() => digest128(rendered.pointerBytes)),
  ],
  ['index shard', shardBytes.byteLength, medianMicros(() => digest128(shardBytes))],
  [
    'first page range (segment 0, modules?sort=id)',
    segment0.byteLength,
    medianMicros(() => digest128(segment0)),
  ],
  ['cursor page range (a pair of segments)', pair.byteLength, medianMicros(() => digest128(pair))],
  ['module detail', detail.byteLength, medianMicros(() => digest128(detail))],
];
// What a publish hashes for the range digests: for every list of more than one segment, segment 0, pair 0
// and the pair after each segment (the object id, hashed anyway, is not counted).
let digestBytes = 0;
for (const bytes of rendered.objects.values()) {
  if (bytes.readUInt32LE(0) !== 0x31544143) continue; // shards are JSON
  const starts = [0];
  for (let at = 0; at < bytes.byteLength; ) {
    at += decodeSegment(bytes, at).byteLength;
    starts.push(at);
  }
  const segments = starts.length - 1;
  if (segments < 2) continue;
  digestBytes += starts[1]! + starts[2]!;
  for (let k = 1; k < segments; k++) digestBytes += starts[Math.min(k + 2, segments)]! - starts[k]!;
}
const megabyte = Buffer.alloc(2 ** 20, 7);
const microsPerMegabyte = medianMicros(() => digest128(megabyte), 50);
const sorted = [...renders].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
console.log(
  JSON.stringify(
    {
      modules: MODULES,
      objects: rendered.objects.size,
      bytes: [...rendered.objects.values()].reduce((sum, bytes) => sum + bytes.byteLength, 0),
      fullRenderMs: { median: Math.round(median), runs: renders.map(Math.round) },
      rangeDigests: {
        bytesHashed: digestBytes,
        ms: Math.round((digestBytes / 2 ** 20) * microsPerMegabyte) / 1000,
        sha256MBperS: Math.round(1e6 / microsPerMegabyte),
      },
      sha256PerMiss: rows.map(([what, bytes, micros]) => ({
        what,
        bytes,
        micros: Math.round(micros * 10) / 10,
      })),
    },
    null,
    1,
  ),
);
