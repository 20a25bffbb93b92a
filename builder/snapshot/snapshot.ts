/**
 * The catalogue snapshot: what the publisher edits and the builder reads.
 *
 * A snapshot is a directory of four JSON files, each an array of records:
 *   standards.json      Standard[]
 *   tags.json           Tag[]
 *   manufacturers.json  Manufacturer[]
 *   modules.json        Module[]  (each carries its jacks, tag ids and panels)
 *
 * Records are closed: a field not listed here is refused by validation, and fields that would publish
 * images, prices or store data are refused with a reason of their own. See docs/snapshot.md.
 */
import type { JackSignal, TagType } from '../../store/schema.js';

export interface Standard {
  /** Nonnegative; `0` is Eurorack 3U. */
  id: number;
  name: string;
  /** Panel height in millimetres. */
  height_mm: number;
}

export interface Tag {
  /** Positive. */
  id: number;
  name: string;
  type: TagType | null;
}

export interface Manufacturer {
  /** Positive. */
  id: number;
  name: string;
  /** ISO 3166-1 alpha-2 country code, or null when unknown. */
  country: string | null;
}

export interface Jack {
  name: string;
  signal: JackSignal;
}

export interface Panel {
  /** e.g. "Black", "Silver", "1U tile" */
  name: string;
  /** Width of this panel in the module's standard's units (HP for Eurorack). */
  hp: number;
  color: string | null;
}

export interface Module {
  /** Positive. */
  id: number;
  name: string;
  manufacturer_id: number;
  /** Width in the standard's units (HP for Eurorack); positive. */
  hp: number;
  /** Standard id (nonnegative). */
  standard: number;
  /** Depth behind the panel in millimetres; positive or null when unknown. */
  depth_mm: number | null;
  /** Current draw in milliamperes on +12 V, -12 V and +5 V; nonnegative or null when unknown. */
  power_12v_ma: number | null;
  power_m12v_ma: number | null;
  power_5v_ma: number | null;
  description: string | null;
  /** Tag ids (positive, distinct). */
  tag_ids: number[];
  ins: Jack[];
  outs: Jack[];
  panels: Panel[];
}

export interface Snapshot {
  standards: Standard[];
  tags: Tag[];
  manufacturers: Manufacturer[];
  modules: Module[];
}

export const SNAPSHOT_FILES = {
  standards: 'standards.json',
  tags: 'tags.json',
  manufacturers: 'manufacturers.json',
  modules: 'modules.json',
} as const satisfies Record<keyof Snapshot, string>;

/**
 * The snapshot's optional fifth file: what it says about itself. Closed like the records: today one field,
 * `empty_catalogue: true`, which a snapshot whose modules.json is `[]` needs (an empty catalogue is otherwise
 * refused: an export that lost its modules must not empty the live catalogue). docs/snapshot.md.
 */
export const META_FILE = 'snapshot.json';

export interface SnapshotMeta {
  /** The snapshot means to publish a catalogue without modules. */
  empty_catalogue?: boolean;
}
