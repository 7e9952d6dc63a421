/**
 * The table form of the bad-input tests (test/unit/runtime/bad-input-*.test.ts, test/gpu/runtime/bad-input-*.test.ts):
 * each row is a call, the error class it must throw, and a pattern its message must match (the
 * message names the problem).
 */
import { expect, it } from 'vitest';

/** An error class a row expects. */
export type ErrorClass = new (...args: never[]) => Error;

/** One bad input: its name, the call, the error class, and the pattern of the message. */
export type Row = [name: string, call: () => unknown, error: ErrorClass, message: RegExp];

/** One test per row: the call throws an instance of the row's class, with a message matching its pattern. */
export function itRefusesEachRow(rows: readonly Row[]): void {
  it.each(rows)('%s', (_name, call, error, message) => {
    let thrown: unknown;
    try {
      call();
    } catch (e) {
      thrown = e;
    }
    expect(thrown, 'it must throw').toBeInstanceOf(error);
    expect((thrown as Error).message).toMatch(message);
  });
}
