/**
 * Window parameters scipy accepts are input, never a 5xx: kaiser with a negative beta (scipy's
 * I0(beta * sqrt(...)) / I0(beta), the same as |beta| since I0 is even) and tukey with alpha >= 1
 * (scipy's Hann) or <= 0 (scipy's boxcar). The values below were printed by scipy 1.17.1
 * (`scipy.signal.get_window`, periodic, 8 points); the server takes them like any window.
 */
import { describe, expect, it } from 'vitest';
import { getWindow } from '../../../src/signal/window.js';
import { validateJob } from '../../../src/engine/validate.js';
import { FakeEngine } from './fake-engine.js';
import { errorOf, serverFactory } from './hostile-client.js';

const SCIPY: [spec: ['kaiser' | 'tukey', number], values: number[]][] = [
  [
    ['kaiser', -2.5],
    [
      0.3039662294153687, 0.5500822043553749, 0.7791669747707872, 0.9414073245278662, 1.0, 0.9414073245278662,
      0.7791669747707872, 0.5500822043553749,
    ],
  ],
  [
    ['tukey', 1.5],
    [0.0, 0.14644660940672627, 0.5, 0.8535533905932737, 1.0, 0.8535533905932737, 0.5, 0.14644660940672627],
  ],
  [
    ['tukey', -0.5],
    [1, 1, 1, 1, 1, 1, 1, 1],
  ],
];

describe('window parameters scipy accepts', () => {
  it.each(SCIPY)('%j equals scipy.signal.get_window', (spec, values) => {
    const w = getWindow(spec, 8);
    expect(w.length).toBe(8);
    for (let i = 0; i < 8; i++) expect(w[i]).toBeCloseTo(values[i]!, 14);
  });

  it('kaiser -beta is kaiser +beta; tukey 1 and above is hann (any length, symmetric or periodic)', () => {
    for (const n of [7, 64, 1025])
      for (const sym of [false, true]) {
        expect(getWindow(['kaiser', -8.6], n, { sym })).toEqual(getWindow(['kaiser', 8.6], n, { sym }));
        expect(getWindow(['tukey', 3], n, { sym })).toEqual(getWindow('hann', n, { sym }));
      }
  });

  it('the engine validates them as windows', () => {
    const context = { stages: new Set<string>() };
    for (const [spec] of SCIPY)
      expect(() => validateJob({ data: new Float32Array(64), flags: ['stft'], window: spec }, context)).not.toThrow();
  });

  const servers = serverFactory();
  it('the server runs them (200 with an engine; with none, the 503 of a valid request without a GPU), and never 5xx for a bad parameter', async () => {
    const withEngine = servers.make({ engine: new FakeEngine() });
    const without = servers.make({ engine: null, unavailableReason: 'no CUDA driver' });
    const signal = Array.from({ length: 256 }, (_, i) => Math.sin(i / 5));
    try {
      for (const [spec] of SCIPY) {
        const json = await withEngine.app.inject({
          method: 'POST',
          url: '/v1/stft',
          payload: { signal, window: spec },
        });
        expect(json.statusCode, JSON.stringify(spec)).toBe(200);
        const query = await withEngine.app.inject({
          method: 'POST',
          url: `/v1/stft?window=${spec.join(',')}`,
          headers: { 'content-type': 'application/octet-stream' },
          payload: Buffer.from(Float32Array.from(signal).buffer),
        });
        expect(query.statusCode, `?window=${spec.join(',')}`).toBe(200);
        const none = await without.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal, window: spec } });
        expect([none.statusCode, errorOf(none.json()).code]).toEqual([503, 'gpu_unavailable']);
        expect(errorOf(none.json()).message).toMatch(
          /^the request is valid, but no GPU can run it here: no CUDA driver/,
        );
      }
      for (const bad of [['kaiser', null], ['kaiser'], ['tukey', 'x'], ['gaussian', -1], ['hann', 2]]) {
        const r = await without.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal, window: bad } });
        expect(r.statusCode, JSON.stringify(bad)).toBe(400);
        expect(errorOf(r.json()).field).toMatch(/^window/);
      }
    } finally {
      await servers.closeAll();
    }
  });
});
