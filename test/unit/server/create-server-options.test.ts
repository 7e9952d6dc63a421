/**
 * createServer()'s refusal of bad options: each is refused at createServer() naming its path,
 * never found later by a request (a limit silently off, a 500, a request never answered, a
 * socket left open, a broken metrics line).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CudaUnavailableError } from '../../../src/ffi/errors.js';
import { isLibraryAvailable } from '../../../src/ffi/libraries.js';
import { lerpBatcher } from '../../../src/pipeline/index.js';
import {
  createServer,
  DEFAULT_LIMITS,
  type CreateServerOptions,
  type TscudaServer,
} from '../../../src/server/index.js';
import { toHttpError } from '../../../src/server/errors.js';
import { SERIES_LABEL_NAMES } from '../../../src/server/metrics.js';
import { FakeEngine, fakeBatcher } from './fake-engine.js';

const servers: TscudaServer[] = [];
function make(options: CreateServerOptions = {}): TscudaServer {
  const s = createServer(options);
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** createServer() with options its type would refuse, as a JavaScript caller may pass them. */
const untyped = (options: unknown) => () => make(options as CreateServerOptions);
const limits = (given: unknown) => untyped({ limits: given });
const noCuda = () => new CudaUnavailableError('driver', ['libcuda.so.1 (system loader)'], 'Install the NVIDIA driver.');

describe('limits', () => {
  it('every count and size limit must be a positive integer', () => {
    expect(limits({ maxSamples: Number.NaN })).toThrow(RangeError);
    expect(limits({ maxSamples: Number.NaN })).toThrow('limits.maxSamples must be a positive integer, got NaN');
    expect(limits({ maxBatchItems: 0 })).toThrow('limits.maxBatchItems must be a positive integer, got 0');
    expect(limits({ maxBatchDim: 1.5 })).toThrow('limits.maxBatchDim must be a positive integer, got 1.5');
    expect(limits({ maxBatchDims: '16' })).toThrow('limits.maxBatchDims must be a positive integer, got "16"');
  });

  it('job retention: maxFinished a positive integer, ttlMs a number of ms a timer holds', () => {
    expect(limits({ jobRetention: { maxFinished: Number.NaN } })).toThrow(
      'limits.jobRetention.maxFinished must be a positive integer, got NaN',
    );
    expect(limits({ jobRetention: { ttlMs: -1 } })).toThrow(
      'limits.jobRetention.ttlMs must be a number of ms in (0, 2147483647], got -1',
    );
    expect(limits({ jobRetention: { ttlMs: 'x' } })).toThrow(
      'limits.jobRetention.ttlMs must be a number of ms in (0, 2147483647], got "x"',
    );
    expect(limits({ jobRetention: 5 })).toThrow(
      /limits\.jobRetention must be an object with some of maxFinished, ttlMs, got 5/,
    );
  });

  it('a finished job stays readable under a partial retention (the rest default)', async () => {
    const engine = new FakeEngine({ manual: true });
    const s = make({ engine, limits: { jobRetention: { maxFinished: 2 } } });
    const post = await s.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8], flags: ['stft'] },
    });
    expect(post.statusCode).toBe(202);
    // The job reaches the engine when its fusion window closes (a millisecond later): release until it has run.
    for (let i = 0; i < 2000 && engine.stats().jobs < 1; i++) {
      engine.release();
      await new Promise((r) => setTimeout(r, 5));
    }
    const ready = await s.app.inject({ method: 'GET', url: `/v1/jobs/${post.json<{ id: string }>().id}` });
    expect(ready.statusCode).toBe(200);
    expect(ready.json<{ status: string }>().status).toBe('ready');
  });

  it('maxPending: an integer in 0..2^24, 0 refusing every POST while GETs answer', async () => {
    expect(limits({ maxPending: -1 })).toThrow('limits.maxPending must be an integer in [0, 16777216], got -1');
    expect(limits({ maxPending: 2.5 })).toThrow('limits.maxPending must be an integer in [0, 16777216], got 2.5');
    const s = make({ engine: new FakeEngine(), limits: { maxPending: 0 } });
    const post = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: [1, 2, 3, 4] } });
    expect(post.statusCode).toBe(429);
    expect(post.headers['retry-after']).toBe('1');
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/live' })).statusCode).toBe(200);
  });

  it('retryAfterS: whole seconds in 0..86400 (a Retry-After header)', () => {
    for (const bad of [-5, Number.NaN, 1.5, 86_401])
      expect(limits({ retryAfterS: bad })).toThrow(`limits.retryAfterS must be an integer in [0, 86400], got ${bad}`);
    expect(limits({ retryAfterS: 'a\nb', maxPending: 0 })).toThrow(
      'limits.retryAfterS must be an integer in [0, 86400], got "a\\nb"',
    );
    expect(limits({ retryAfterS: 0 })).not.toThrow();
  });

  it('an unknown limit is refused, naming it and the known ones; undefined takes the default', async () => {
    expect(limits({ maxSample: 10 })).toThrow(TypeError);
    expect(limits({ maxSample: 10 })).toThrow(
      /^limits\.maxSample: unknown option \(known: bodyLimitBytes, jsonBodyLimitBytes, .*maxSamples, .*maxBatchDims, maxJsonResultValues, maxBatchDelayMs\)$/,
    );
    expect(limits({ jobRetention: { ttl: 5 } })).toThrow(
      'limits.jobRetention.ttl: unknown option (known: maxFinished, ttlMs)',
    );
    const s = make({ limits: { maxSamples: undefined } });
    const info = (await s.app.inject({ method: 'GET', url: '/v1/info' })).json<{ limits: { maxSamples: number } }>();
    expect(info.limits.maxSamples).toBe(DEFAULT_LIMITS.maxSamples);
  });

  it('limits must be an object', () => {
    expect(limits(5)).toThrow(TypeError);
    expect(limits(5)).toThrow(/^limits must be an object with some of bodyLimitBytes, .*, got 5$/);
    expect(limits(null)).toThrow(/^limits must be an object .*, got null$/);
    expect(limits([])).toThrow(/^limits must be an object .*, got an array$/);
  });
});

describe('listen() after close()', () => {
  it('rejects once close() was called, before or after it resolved, and opens no socket', async () => {
    const closing = createServer();
    const closed = closing.close();
    await expect(closing.listen({ port: 0 })).rejects.toThrow(
      /^listen\(\) after close\(\): this server is closing or closed/,
    );
    await closed;
    await expect(closing.listen({ port: 0 })).rejects.toThrow(/listen\(\) after close\(\)/);
    expect(closing.app.server.listening).toBe(false);
  });

  it('close() while listen() is opening its socket: listen rejects, the socket is closed, close resolves after', async () => {
    const s = createServer();
    const listening = s.listen({ port: 0 });
    const closed = s.close();
    await expect(listening).rejects.toThrow(/close\(\) was called while listen\(\) was starting/);
    await closed;
    expect(s.app.server.listening).toBe(false);
  });

  it('listen options: known keys, a port in 0..65535, a positive backlog', async () => {
    const s = make();
    await expect(s.listen({ port: 0, bogus: 1 } as never)).rejects.toThrow(
      'listen options.bogus: unknown option (known: port, host, backlog)',
    );
    await expect(s.listen({ port: 70_000 })).rejects.toThrow(
      'listen options.port must be an integer in [0, 65535], got 70000',
    );
    await expect(s.listen({ port: 0, backlog: -5 })).rejects.toThrow(
      'listen options.backlog must be a positive integer, got -5',
    );
    await expect(s.listen(null as never)).rejects.toThrow(/listen\(\) takes an options object/);
    expect(s.app.server.listening).toBe(false);
  });
});

describe('the options object and the engine', () => {
  it('options must be an object', () => {
    expect(untyped(null)).toThrow(TypeError);
    expect(untyped(null)).toThrow('createServer options must be an object, got null');
    expect(untyped(5)).toThrow('createServer options must be an object, got 5');
  });

  it('an engine must have what the server calls: submit, stats, close and a lost Promise', () => {
    expect(untyped({ engine: {} })).toThrow(TypeError);
    expect(untyped({ engine: {} })).toThrow(
      'engine.submit must be a function (engine must be a JobEngineLike), got undefined',
    );
    const withoutLost = { submit: () => undefined, stats: () => undefined, close: async () => undefined };
    expect(untyped({ engine: withoutLost })).toThrow(
      'engine.lost must be a Promise (engine must be a JobEngineLike), got undefined',
    );
    expect(
      untyped({
        engine: { ...withoutLost, lost: Promise.reject(new Error('lost')).catch(() => undefined), hostBuffer: 1 },
      }),
    ).toThrow('engine.hostBuffer must be a function when present, got 1');
    expect(untyped({ engine: 'gpu' })).toThrow('engine must be a JobEngineLike or null, got "gpu"');
    expect(() => make({ engine: new FakeEngine() })).not.toThrow();
    expect(() => make({ engine: null })).not.toThrow();
  });

  it('other options are checked against their declared types', () => {
    expect(untyped({ jobIdPrefix: 5 })).toThrow('jobIdPrefix must be a string, got 5');
    expect(untyped({ ownsEngine: 'yes' })).toThrow('ownsEngine must be a boolean, got "yes"');
    expect(untyped({ onLost: true })).toThrow('onLost must be a function, got true');
    expect(untyped({ remoteJobs: { get: async () => undefined } })).toThrow(
      'remoteJobs.delete must be a function, got undefined',
    );
  });
});

describe('metricsLabels, extraFlags, info', () => {
  it('metricsLabels: Prometheus label names, none of the series own, string values', async () => {
    expect(untyped({ metricsLabels: { 'bad label': 'x' } })).toThrow(TypeError);
    expect(untyped({ metricsLabels: { 'bad label': 'x' } })).toThrow(
      'metricsLabels["bad label"]: not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)',
    );
    expect(untyped({ metricsLabels: { __name: 'x' } })).toThrow('metricsLabels.__name: not a Prometheus label name');
    expect(untyped({ metricsLabels: { '1st': 'x' } })).toThrow('metricsLabels["1st"]: not a Prometheus label name');
    expect(untyped({ metricsLabels: { endpoint: 'x' } })).toThrow(
      /^metricsLabels\.endpoint: the server's own series use this label \(endpoint, .*\); pick another name$/,
    );
    expect(untyped({ metricsLabels: { le: 'x' } })).toThrow(
      /metricsLabels\.le: the server's own series use this label/,
    );
    expect(untyped({ metricsLabels: { worker: 2 } })).toThrow('metricsLabels.worker must be a string, got 2');
    expect(untyped({ metricsLabels: 'worker=2' })).toThrow(
      'metricsLabels must be an object of label names to string values, got "worker=2"',
    );
    const s = make({ metricsLabels: { worker: '2', zone: 'a "b"\nc' } });
    expect((await s.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(
      /^tscuda_ready\{worker="2",zone="a \\"b\\"\\nc"\} 0$/m,
    );
  });

  it('SERIES_LABEL_NAMES holds every label name the server registers', () => {
    const s = make({ engine: new FakeEngine() });
    const used = s.metrics.registry
      .getMetricsAsArray()
      .flatMap((m) => (m as unknown as { labelNames: string[] }).labelNames);
    expect(used.length).toBeGreaterThan(0);
    for (const name of used) expect(SERIES_LABEL_NAMES).toContain(name);
  });

  it('extraFlags must be an array of strings', async () => {
    expect(untyped({ extraFlags: 'foo' })).toThrow(TypeError);
    expect(untyped({ extraFlags: 'foo' })).toThrow(
      'extraFlags must be an array of strings (registered stage names), got "foo"',
    );
    expect(untyped({ extraFlags: ['ok', 7] })).toThrow(
      'extraFlags[1] must be a string (a registered stage name), got 7',
    );
    const s = make({ extraFlags: ['denoise'] });
    expect((await s.app.inject({ method: 'GET', url: '/v1/info' })).json<{ flags: string[] }>().flags).toContain(
      'denoise',
    );
  });

  it('info must be a function', () => {
    expect(untyped({ info: 5 })).toThrow(TypeError);
    expect(untyped({ info: 5 })).toThrow('info must be a function, got 5');
    expect(untyped({ info: { devices: [] } })).toThrow('info must be a function, got an object');
  });
});

describe('batchers', () => {
  it('a factory that finds no CUDA driver answers 503 gpu_unavailable (not retryable), never 500', async () => {
    const s = make({
      batchers: {
        lerp: () => {
          throw noCuda();
        },
      },
    });
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/lerp',
      payload: { items: [{ a: [0, 0], b: [1, 1], t: 0.5 }] },
    });
    expect(res.statusCode).toBe(503);
    const { error } = res.json<{ error: { code: string; retryable: boolean; message: string } }>();
    expect(error).toMatchObject({ code: 'gpu_unavailable', retryable: false });
    expect(error.message).toMatch(/^no CUDA driver: driver library not found/);
    expect(res.headers['retry-after']).toBeUndefined();
    expect(toHttpError(noCuda(), 1)).toMatchObject({ statusCode: 503, code: 'gpu_unavailable', reason: 'UNAVAILABLE' });
  });

  it.runIf(!isLibraryAvailable('driver'))(
    'the documented lerpBatcher factory, on a machine without a driver: 503 gpu_unavailable',
    async () => {
      const s = make({
        batchers: { lerp: (dim) => lerpBatcher({ dim, maxBatchSize: 256, maxWaitMs: 1, channelSize: 4096 }) },
      });
      const res = await s.app.inject({
        method: 'POST',
        url: '/v1/batch/lerp',
        payload: { items: [{ a: [0, 0, 1], b: [1, 1, 1], t: 0.25 }] },
      });
      expect(res.statusCode).toBe(503);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('gpu_unavailable');
    },
  );

  it('an entry must be a function, of a known kind', () => {
    expect(untyped({ batchers: { lerp: 5 } })).toThrow(TypeError);
    expect(untyped({ batchers: { lerp: 5 } })).toThrow('batchers.lerp must be a function (dim) => batcher, got 5');
    expect(untyped({ batchers: { lerp: null } })).toThrow(
      'batchers.lerp must be a function (dim) => batcher, got null',
    );
    expect(untyped({ batchers: { lerpp: () => fakeBatcher(() => new Float32Array(1)) } })).toThrow(
      'batchers.lerpp: unknown option (known: gradient, lerp, slerp)',
    );
    expect(untyped({ batchers: () => undefined })).toThrow(
      'batchers must be an object with some of gradient, lerp, slerp, got a function',
    );
  });
});

describe('top-level options', () => {
  it('a misspelt option is refused by name, with the known ones', () => {
    expect(untyped({ limit: { maxPending: 0 } })).toThrow(TypeError);
    expect(untyped({ limit: { maxPending: 0 } })).toThrow(
      /createServer options\.limit: unknown option \(known: engine, .*limits/,
    );
    expect(untyped({ ownEngine: true })).toThrow(/options\.ownEngine: unknown option/);
  });

  it('jobIdPrefix: only URL-safe id characters, short enough that every id it makes can be fetched', async () => {
    for (const prefix of ['w1.', 'worker 1/', 'é', '€', 'a\nb'])
      expect(untyped({ jobIdPrefix: prefix })).toThrow(/jobIdPrefix may hold only letters, digits/);
    expect(untyped({ jobIdPrefix: 'x'.repeat(50) })).toThrow(/jobIdPrefix must be at most 42 characters/);
    const s = make({ engine: new FakeEngine(), jobIdPrefix: 'x'.repeat(42) });
    const posted = await s.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8], flags: ['stft'] },
    });
    expect(posted.statusCode).toBe(202);
    // 202 while the job runs (it waits a millisecond for others to fuse with), 200 once it is ready: the id is found either way.
    let got = await s.app.inject({ method: 'GET', url: String(posted.headers.location) });
    for (let i = 0; i < 400 && got.statusCode === 202; i++) {
      await new Promise((r) => setTimeout(r, 5));
      got = await s.app.inject({ method: 'GET', url: String(posted.headers.location) });
    }
    expect(got.statusCode).toBe(200);
  });

  it('logger: a boolean, pino options or a logger instance; anything else is refused', async () => {
    expect(untyped({ logger: 5 })).toThrow("logger must be a boolean, pino's options or a logger, got 5");
    expect(untyped({ logger: 'yes' })).toThrow(/logger must be a boolean/);
    expect(untyped({ logger: { info: () => undefined } })).toThrow(
      /logger has info but not error, warn, debug, trace, fatal, child/,
    );
    const lines: string[] = [];
    const s = make({
      engine: new FakeEngine(),
      logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } } as never,
    });
    await s.app.inject({ method: 'GET', url: '/v1/info' });
    expect(lines.some((l) => l.includes('/v1/info'))).toBe(true);
    // A logger of the caller's (pino's shape): fastify 5 wants it as loggerInstance; createServer passes it so.
    const seen: unknown[] = [];
    const own = {
      level: 'info',
      info: (...args: unknown[]) => void seen.push(args),
      error: () => undefined,
      warn: () => undefined,
      debug: () => undefined,
      trace: () => undefined,
      fatal: () => undefined,
      silent: () => undefined,
      child(): unknown {
        return own;
      },
    };
    const t = make({ engine: new FakeEngine(), logger: own as never });
    await t.app.inject({ method: 'GET', url: '/v1/info' });
    expect(seen.length).toBeGreaterThan(0);
  });
});

describe('limits.maxJsonResultValues', () => {
  it('a result over it is 406 naming the binary answer, synchronously and from /v1/jobs; binary still answers', async () => {
    const s = make({ engine: new FakeEngine(), limits: { maxJsonResultValues: 100 } });
    const signal = Array.from({ length: 256 }, (_, i) => Math.sin(i));
    const json = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal } });
    expect(json.statusCode).toBe(406);
    expect(json.json()).toMatchObject({
      error: {
        code: 'result_too_large_for_json',
        field: 'accept',
        message: expect.stringMatching(/Accept: application\/octet-stream/),
      },
    });
    const binary = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { accept: 'application/octet-stream' },
      payload: { signal },
    });
    expect(binary.statusCode).toBe(200);
    const posted = await s.app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal, flags: ['stft'] } });
    const href = String(posted.headers.location);
    let got = await s.app.inject({ method: 'GET', url: href });
    for (let i = 0; i < 50 && got.statusCode === 202; i++) {
      await new Promise((r) => setTimeout(r, 20));
      got = await s.app.inject({ method: 'GET', url: href });
    }
    expect(got.statusCode).toBe(406);
    expect(
      (await s.app.inject({ method: 'GET', url: href, headers: { accept: 'application/octet-stream' } })).statusCode,
    ).toBe(200);
    expect(limits({ maxJsonResultValues: 0 })).toThrow('limits.maxJsonResultValues must be a positive integer, got 0');
  });
});
