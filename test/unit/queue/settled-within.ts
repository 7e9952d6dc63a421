/** Test helper: how a promise settled within a time, without waiting on it for good. */

/** What `promise` settled with within `ms`: its value, its error, or 'pending'. */
export async function settledWithin(
  promise: Promise<unknown>,
  ms: number,
): Promise<{ value?: unknown; error?: unknown } | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
