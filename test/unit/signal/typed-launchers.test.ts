/**
 * SignalWorkspace.kernel keeps the generated launchers' parameter lists (issue 24: it used to cast
 * them to `Record<string, Launch>`, so any argument list type-checked). Checked by tsc (`npm test`
 * type-checks test/): each @ts-expect-error below must be an error, or tsc fails.
 */
import { describe, expect, it } from 'vitest';
import type { Context } from '../../../src/runtime/context.js';
import type { LaunchConfig } from '../../../src/runtime/kernel.js';
import type { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import type { Precision } from '../../../src/runtime/fft/precision.js';
import type { SignalWorkspace } from '../../../src/signal/workspace.js';

/** Never called: only type-checked. */
function launches(
  ws: SignalWorkspace,
  ctx: Context,
  p: Precision,
  cfg: LaunchConfig,
  real: DeviceBuffer<'f32'> | DeviceBuffer<'f64'>,
  complex: DeviceBuffer<'c64'>,
): void {
  const scale = ws.kernel(ctx, 'scale', p);
  scale(cfg, real, 4, 8, 0.5);
  // @ts-expect-error a missing argument
  scale(cfg, real, 4, 8);
  // @ts-expect-error a complex buffer where the kernel takes real series
  scale(cfg, complex, 4, 8, 0.5);
  // @ts-expect-error arguments in the wrong order
  scale(cfg, 4, real, 8, 0.5);
  // @ts-expect-error no such kernel
  ws.kernel(ctx, 'no_such_kernel', p);
  // The 16-bit variants go by name (chosen from the sample type at run time): the name is checked.
  ws.kernelNamed(ctx, 'frame_i16_f32');
  // @ts-expect-error no such 16-bit variant
  ws.kernelNamed(ctx, 'frame_u8_f32');
  // @ts-expect-error the module is not a launcher
  ws.kernelNamed(ctx, 'module');
}

describe('typed signal launchers', () => {
  it('are checked by the compiler (this file type-checks only if each misuse above is an error)', () => {
    expect(typeof launches).toBe('function');
  });
});
