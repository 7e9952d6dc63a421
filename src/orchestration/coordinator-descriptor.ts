/** How a Coordinator is made: its descriptor, checked before anything else happens. */
import { knownKeys, shownValue } from '../runtime/value-checks.js';

/** How a Coordinator is made. */
export interface CoordinatorDescriptor {
  label?: string | undefined;
  /**
   * Settled operations kept for state() / wait() / names (default 4096); older ones are
   * forgotten oldest first (a failure's outcome is kept longer, see MAX_FORGOTTEN_FAILURES).
   */
  retainSettled?: number | undefined;
  /**
   * Names identify operations (default true): unique among unsettled ones, usable in `after`,
   * wait(), state(). false: names are labels only (any may repeat) and operations are
   * referred to by id, as the AsyncCoordinator does.
   */
  uniqueNames?: boolean | undefined;
  /**
   * Whether an operation's `stream` may be a stream of the pool's context that is not one of the
   * pool's (a "guest", tracked by the pool, never handed out). Default false: such a stream is
   * refused, since it escapes the pool's strategy and barriers. The AsyncCoordinator allows it.
   */
  guestStreams?: boolean | undefined;
}

/** Settled operations a Coordinator keeps by default. */
const DEFAULT_RETAIN = 4096;

/** Every key of CoordinatorDescriptor (the Record makes a new one fail to compile until listed). */
const DESCRIPTOR_KEYS = Object.keys({
  label: true,
  retainSettled: true,
  uniqueNames: true,
  guestStreams: true,
} satisfies Record<keyof CoordinatorDescriptor, true>);

/** The descriptor is an object of known keys: checked before the Coordinator has a label. */
export function checkDescriptorShape(descriptor: CoordinatorDescriptor): void {
  if (typeof descriptor !== 'object' || descriptor === null)
    throw new TypeError(
      `Coordinator descriptor must be an object, got ${descriptor === null ? 'null' : typeof descriptor}`,
    );
  // A misspelt option (`retain: 10`) silently meant its default.
  knownKeys(descriptor, DESCRIPTOR_KEYS, 'Coordinator descriptor');
}

/** The descriptor's options, checked (errors name `label`), with their defaults. */
export function resolveDescriptor(
  descriptor: CoordinatorDescriptor,
  label: string,
): { retainSettled: number; uniqueNames: boolean; guestStreams: boolean } {
  const retain = descriptor.retainSettled ?? DEFAULT_RETAIN;
  if (!Number.isSafeInteger(retain) || retain < 0)
    throw new RangeError(`${label}: retainSettled must be an integer >= 0, got ${String(retain)}`);
  if (descriptor.uniqueNames !== undefined && typeof descriptor.uniqueNames !== 'boolean')
    throw new TypeError(`${label}: uniqueNames must be a boolean, got ${shownValue(descriptor.uniqueNames)}`);
  if (descriptor.guestStreams !== undefined && typeof descriptor.guestStreams !== 'boolean')
    throw new TypeError(`${label}: guestStreams must be a boolean, got ${typeof descriptor.guestStreams}`);
  return {
    retainSettled: retain,
    uniqueNames: descriptor.uniqueNames ?? true,
    guestStreams: descriptor.guestStreams ?? false,
  };
}
