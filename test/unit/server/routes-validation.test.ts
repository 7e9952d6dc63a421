import { afterEach, describe, expect, it } from 'vitest';
import { FakeEngine } from './fake-engine.js';
import { make, closeServers, signal } from './routes-fixture.js';

afterEach(closeServers);

describe('validation: 4xx naming the field', () => {
  const cases: [string, Record<string, unknown> | string, number, string][] = [
    ['NaN fs in the query', 'NaN', 400, 'fs'],
    [
      'band above fs/2',
      {
        signal: signal(32),
        fs: 10,
        bands: [
          [1, 2],
          [3, 6],
        ],
      },
      400,
      'bands[1][1]',
    ],
    ['band low >= high', { signal: signal(32), fs: 10, passBand: [3, 3] }, 400, 'passBand'],
    ['unknown flag', { signal: signal(32), flags: ['stft', 'fly'] }, 400, 'flags[1]'],
    ['unknown parameter', { signal: signal(32), windw: 'hann' }, 400, 'windw'],
    ['non-number sample', { signal: [1, 2, 'x', 4] }, 400, 'signal[2]'],
    [
      'ragged rows',
      {
        signal: [
          [1, 2, 3],
          [1, 2],
        ],
      },
      400,
      'signal[1]',
    ],
    ['batch does not divide', { signal: signal(10), batch: 3 }, 400, 'batch'],
    ['wrong type fs', { signal: signal(10), fs: 'fast' }, 400, 'fs'],
    ['previewBins too large', { signal: signal(10), previewBins: 7 }, 400, 'previewBins'],
    ['bad detrend', { signal: signal(10), detrend: 'cubic' }, 400, 'detrend'],
    ['missing signal', { fs: 10 }, 400, 'signal'],
    ['timeout above the limit', { signal: signal(10), timeout: 1e9 }, 400, 'timeout'],
  ];
  for (const [name, payload, status, field] of cases) {
    it(name, async () => {
      const s = make({ engine: new FakeEngine() });
      const res =
        typeof payload === 'string'
          ? await s.app.inject({
              method: 'POST',
              url: `/v1/stft?fs=${payload}`,
              headers: { 'content-type': 'application/octet-stream' },
              payload: Buffer.alloc(64),
            })
          : await s.app.inject({ method: 'POST', url: '/v1/stft', payload });
      expect(res.statusCode).toBe(status);
      const error = res.json<{ error: { field: string; code: string; message: string } }>().error;
      expect(error.field).toBe(field);
      expect(error.message).toContain(field.split('[')[0]);
    });
  }

  it('malformed JSON, wrong content type, a length not a multiple of the element size, unknown query parameters', async () => {
    const s = make({ engine: new FakeEngine() });
    const bad = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/json' },
      payload: '{"signal": [1, 2,',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ error: { code: string; field: string } }>().error).toMatchObject({
      code: 'malformed_json',
      field: 'body',
    });
    const ct = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'image/png' },
      payload: Buffer.alloc(8),
    });
    expect(ct.statusCode).toBe(415);
    expect(ct.json<{ error: { field: string } }>().error.field).toBe('content-type');
    const odd = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?dtype=f32',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(10),
    });
    expect(odd.statusCode).toBe(400);
    expect(odd.json<{ error: { field: string; message: string } }>().error).toMatchObject({ field: 'body' });
    expect(odd.json<{ error: { message: string } }>().error.message).toContain('multiple of the f32 element size');
    const unknownQuery = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?speed=11',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(16),
    });
    expect(unknownQuery.statusCode).toBe(400);
    expect(unknownQuery.json<{ error: { field: string } }>().error.field).toBe('speed');
    const dtype = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?dtype=int8',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(16),
    });
    expect(dtype.json<{ error: { field: string } }>().error.field).toBe('dtype');
    const notAcceptable = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { accept: 'text/html' },
      payload: { signal: signal(8) },
    });
    expect(notAcceptable.statusCode).toBe(406);
  });

  it('an engine JobValidationError is a 400 with its field; a failed job is a 500', async () => {
    const s = make({ engine: new FakeEngine(), extraFlags: ['reject-me', 'explode'] });
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: signal(8), flags: ['reject-me'] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: { field: string } }>().error.field).toBe('flags[0]');
    const boom = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: signal(8), flags: ['explode'] },
    });
    expect(boom.statusCode).toBe(500);
    expect(boom.json<{ error: { code: string } }>().error.code).toBe('job_failed');
  });

  it('413 for a body over the limit and for too many samples; 404 JSON for unknown routes', async () => {
    const s = make({ engine: new FakeEngine(), limits: { bodyLimitBytes: 1024, maxSamples: 100 } });
    const big = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(4096),
    });
    expect(big.statusCode).toBe(413);
    const many = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(404),
    });
    expect(many.statusCode).toBe(413);
    expect(many.json<{ error: { field: string } }>().error.field).toBe('signal');
    const nf = await s.app.inject({ method: 'GET', url: '/v1/nothing' });
    expect(nf.statusCode).toBe(404);
    expect(nf.json<{ error: { code: string } }>().error.code).toBe('not_found');
  });
});
