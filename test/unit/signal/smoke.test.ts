import './emulation/emulate-runtime.js';
import { describe, expect, it } from 'vitest';
import { FakeDeviceBuffer } from './emulation/fake-runtime.js';
import { sosReference } from './emulation/filter-references.js';
const signal = await import('../../../src/signal/index.js');
describe('smoke', () => {
  it('sosfilt', () => {
    const sos = signal.butter(4, [0.1, 0.3], { btype: 'bandpass' });
    for (const n of [1, 2, 7, 1023, 1025, 3000, 20000]) {
      const batch = 3;
      const x = Float64Array.from({ length: batch * n }, () => Math.random() - 0.4);
      const t0 = Date.now();
      const y = signal.sosfilt(sos, FakeDeviceBuffer.from('f64', x) as any, { batch }) as any;
      const ms = Date.now() - t0;
      let err = 0, den = 0;
      for (let b = 0; b < batch; b++) {
        const r = sosReference(sos, x.subarray(b * n, (b + 1) * n));
        for (let t = 0; t < n; t++) { err = Math.max(err, Math.abs(y.host[b * n + t] - r[t]!)); den = Math.max(den, Math.abs(r[t]!)); }
      }
      console.log(n, ms, 'ms', err / den);
    }
  });
});
