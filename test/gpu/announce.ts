/** Vitest globalSetup of the gpu project: says once, in one line, why GPU tests skip. */
export default async function announce(): Promise<void> {
  const { gpu } = await import('./gpu-available.js');
  if (!gpu.available) console.log(`GPU tests skipped: ${gpu.reason}`);
}
