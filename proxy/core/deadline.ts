/** Every dependency call is bounded in time and its faults are named after the dependency. */
import { setMaxListeners } from 'node:events';
import { type Dependency, DependencyError, errorMessage } from '../../store/errors.js';

/**
 * Calls that start within the same slot of this many milliseconds share one deadline: one AbortController and
 * one timer per slot and timeout, instead of one of each per call (under load, a few dozen a second instead of
 * two per request). A call's deadline is therefore between `timeoutMs` and `timeoutMs + SLOT_MS` after it starts.
 */
export const SLOT_MS = 10;

interface Slot {
  index: number;
  timeoutMs: number;
  signal: AbortSignal;
  /** What each call still waiting does at the deadline: a Set, cheaper per call than an abort listener. */
  waiting: Set<() => void>;
}

const slots = new Map<string, Slot>();
/** The slot handed out last: under load nearly every call starts in it. */
let latest: Slot | undefined;

/** The shared deadline of calls starting now with `timeoutMs`; aborted with a plain Error when it passes. */
function slotFor(timeoutMs: number): Slot {
  const now = performance.now();
  const index = Math.floor(now / SLOT_MS);
  if (latest && latest.index === index && latest.timeoutMs === timeoutMs) return latest;
  const key = `${timeoutMs}:${index}`;
  let slot = slots.get(key);
  if (slot) {
    latest = slot;
    return slot;
  }
  const controller = new AbortController();
  // The store's client may listen to this one signal for every call of the slot: no leak warning.
  setMaxListeners(0, controller.signal);
  const waiting = new Set<() => void>();
  slot = { index, timeoutMs, signal: controller.signal, waiting };
  slots.set(key, slot);
  latest = slot;
  const timer = setTimeout(
    () => {
      slots.delete(key);
      controller.abort(new Error(`deadline of ${timeoutMs} ms passed`));
      for (const onDeadline of waiting) onDeadline();
      waiting.clear();
    },
    (index + 1) * SLOT_MS + timeoutMs - now,
  );
  // A pending call keeps the process alive by itself; an idle slot must not.
  timer.unref();
  return slot;
}

/**
 * The deadline of the metering step for a dependency timeout of `timeoutMs`: the meter's writes wait
 * `timeoutMs` for their answers, like every call; a write whose answer is lost (no answer in time included) is
 * then looked for with one consistent read, within a quarter more (proxy/quota/dynamo.ts).
 * @example meteringDeadlineMs(2000) // → 2500
 */
export function meteringDeadlineMs(timeoutMs: number): number {
  return timeoutMs + Math.ceil(timeoutMs / 4);
}

/**
 * A signal that aborts `timeoutMs` (plus at most {@link SLOT_MS}) from now, shared by every caller in the same
 * slot: a deadline inside a call that already runs under {@link callWithDeadline}, at no timer of its own.
 * @example transport.updateItem(input, deadlineSignal(1500))
 */
export function deadlineSignal(timeoutMs: number): AbortSignal {
  return slotFor(timeoutMs).signal;
}

/**
 * Run `call` with an abort signal that fires at the deadline (`timeoutMs`, plus at most {@link SLOT_MS}), and
 * stop waiting at that moment even if the implementation ignores the signal. Any failure becomes a
 * {@link DependencyError} of `dependency`, so the caller can answer with that dependency's 503. A call that
 * settles after the deadline is caught and dropped: it can never become an unhandled rejection.
 * @example await callWithDeadline('objects', 2000, (signal) => store.get(key, { signal }))
 */
export function callWithDeadline<T>(
  dependency: Dependency,
  timeoutMs: number,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { signal, waiting } = slotFor(timeoutMs);
  let pending: Promise<T>;
  try {
    pending = Promise.resolve(call(signal));
  } catch (error) {
    pending = Promise.reject(error);
  }
  return new Promise<T>((resolve, reject) => {
    const onDeadline = () =>
      reject(new DependencyError(dependency, `${dependency} call timed out after ${timeoutMs} ms`));
    waiting.add(onDeadline);
    pending.then(
      (value) => {
        waiting.delete(onDeadline);
        resolve(value);
      },
      (error: unknown) => {
        waiting.delete(onDeadline);
        reject(dependencyFault(dependency, error));
      },
    );
  });
}

/** A call's failure as a fault of `dependency` (kept when it already is one). */
function dependencyFault(dependency: Dependency, error: unknown): DependencyError {
  if (error instanceof DependencyError && error.dependency === dependency) return error;
  return new DependencyError(dependency, `${dependency} call failed: ${errorMessage(error)}`, {
    cause: error,
  });
}
