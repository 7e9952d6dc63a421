/** The failures of the lane primitive. */

/**
 * Work was handed to a lane with no slot for it: every slot taken, or (for work that must have the
 * lane alone) any. Whoever feeds a lane schedules it (the job engine's core never hands a lane more
 * than its depth) or waits for a slot with `lane.acquire()`; this is that scheduler's bug.
 */
export class LaneBusyError extends Error {
  override readonly name: string = 'LaneBusyError';
  /** Slots taken when the work arrived, of `depth`. */
  readonly taken: number;
  readonly depth: number;
  /** Whether the work needed the lane alone. */
  readonly exclusive: boolean;

  constructor(lane: string, taken: number, depth: number, exclusive: boolean) {
    super(
      `Lane "${lane}": work arrived with ${taken} of its ${depth} slots taken${exclusive ? ' and needs the lane alone' : ''}; whoever feeds the lane schedules it (or waits with acquire())`,
    );
    this.taken = taken;
    this.depth = depth;
    this.exclusive = exclusive;
  }
}
