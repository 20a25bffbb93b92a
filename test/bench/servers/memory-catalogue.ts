/** A whole published catalogue in a MemoryObjectStore (objects, index shards, pointer), for the bench's in-memory proxies. */
import { planCatalogue } from '../../../builder/render.js';
import type { Snapshot } from '../../../builder/snapshot.js';
import { objectKeyFor, POINTER_KEY } from '../../../proxy/format.js';
import { MemoryObjectStore } from '../../../proxy/objects/memory.js';

export async function catalogueInMemory(
  snapshot: Snapshot,
): Promise<{ objects: MemoryObjectStore; bytes: number }> {
  const plan = planCatalogue(snapshot);
  const objects = new MemoryObjectStore();
  let bytes = 0;
  for (const object of plan.objects()) {
    await objects.put(objectKeyFor('', object.objectId), object.bytes);
    bytes += object.bytes.byteLength;
  }
  const { pointerBytes, shards } = plan.result();
  for (const [shardId, shard] of shards) await objects.put(objectKeyFor('', shardId), shard);
  await objects.put(POINTER_KEY, pointerBytes);
  return { objects, bytes };
}
