/**
 * Vitest globalSetup of the gpu project. Without a GPU the tests skip, and the one-line reason is
 * printed again after the test summary (the teardown runs after the reporter), where it is seen.
 * `npm run test:gpu` (TSCUDA_REQUIRE_GPU=1) without a GPU prints that one line and exits 1 at once:
 * no stack trace, no list of skipped files.
 */
export default async function announce(): Promise<(() => void) | undefined> {
  const { gpu } = await import('./gpu-available.js');
  if (gpu.available) return undefined;
  if (process.env.TSCUDA_REQUIRE_GPU) {
    process.stderr.write(`npm run test:gpu needs a GPU: ${gpu.reason}\n`);
    process.exit(1);
  }
  return () => console.log(`GPU tests skipped: ${gpu.reason}`);
}
