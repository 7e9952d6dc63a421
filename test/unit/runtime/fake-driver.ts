/**
 * Fakes of the raw driver and cuFFT for runtime tests without a GPU. Every function answers
 * success, filling its out-parameter cells (a fresh handle, or the value a test gave for that
 * function), except the ones a test makes fail; every call is recorded by name. A test file
 * installs them with:
 *
 *   vi.mock('../../../src/ffi/api.js', async (importOriginal) => ({
 *     ...(await importOriginal<object>()), ...(await import('./fake-driver.js')).fakeApi() }));
 */

/** Calls made to fail: name -> status. */
export const failures = new Map<string, number>();
/** Names of the calls made, in order (tests clear it). */
export const calls: string[] = [];
/** Out-parameter values by function name: a value per cell, or a function of the call's arguments. */
export const outValues: Record<string, readonly unknown[] | ((...args: unknown[]) => readonly unknown[])> = {
  cuDeviceGetCount: [2],
  cuDeviceGet: (_cell, ordinal) => [ordinal],
  cuCtxGetStreamPriorityRange: [0, -5],
  cuEventElapsedTime: [1.5],
  cufftCreate: [7],
};

let nextHandle = 1;
/** Device addresses the fake allocations hand out (4 KiB apart, never 0). */
let nextAddress = 0x10000;

function fakeLibrary(): object {
  return new Proxy(
    {},
    {
      get:
        (_, name: string) =>
        (...args: unknown[]): number => {
          calls.push(name);
          const failure = failures.get(name);
          if (failure !== undefined) return failure;
          const given = outValues[name];
          const values = typeof given === 'function' ? given(...args) : given;
          let cell = 0;
          for (const arg of args) {
            if (Array.isArray(arg)) arg[0] = values?.[cell++] ?? { handle: nextHandle++ };
            // An allocation's out-parameter bound as a plain pointer (cuda.ts, addressCell).
            else if (arg instanceof BigUint64Array && arg.length === 1) arg[0] = BigInt((nextAddress += 4096));
          }
          return 0;
        },
    },
  );
}

const driver = fakeLibrary();
const cufft = fakeLibrary();

/** What replaces ffi/api.js's raw libraries. */
export function fakeApi(): { driver: () => object; driverOutPointers: () => object; cufft: () => object } {
  return { driver: () => driver, driverOutPointers: () => driver, cufft: () => cufft };
}
