/**
 * The pure parts of complex (IQ) input: the one table of input kinds, how an input is read
 * (kind, precision, scale, series), the two-sided geometry of complex input (shapes and fftfreq
 * order), complex taps, and every refusal of bad input, each before any device memory is taken
 * (device buffers are emulation/fake-runtime.ts's host stand-ins; no kernel runs).
 */
import { describe, expect, it, vi } from 'vitest';
import { FakeDeviceBuffer } from './emulation/fake-runtime.js';

vi.mock('../../../src/runtime/memory/device-buffer.js', async () => ({
  DeviceBuffer: (await import('./emulation/fake-runtime.js')).FakeDeviceBuffer,
}));
vi.mock('../../../src/runtime/fft/plan-cache.js', async () => ({
  FftPlanCache: (await import('./emulation/fake-runtime.js')).FakePlanCache,
}));
vi.mock('../../../src/runtime/event.js', async () => ({
  Event: (await import('./emulation/fake-runtime.js')).FakeEvent,
}));

const signal = await import('../../../src/signal/index.js');
const {
  INPUT_KINDS,
  SAMPLE_DTYPES,
  ComplexInputError,
  FilterCoefficientError,
  SignalLengthError,
  inputKind,
  inputSeries,
  isSampleDType,
  sampleScale,
  spectralGeometry,
  spectralFrequencies,
  STFT_DEFAULTS,
  WELCH_DEFAULTS,
  checkComplexTaps,
  correlationTaps,
  isComplexTaps,
} = signal;

// The fakes stand in for DeviceBuffer: the casts below are the test's, not the library's.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const buffer = (dtype: string, length: number): Any => new FakeDeviceBuffer(dtype, length, `test ${dtype}`);

/** Runs `call`, expecting it to throw `error` (a class and a message pattern) having allocated nothing. */
function refusedBeforeWork(call: () => unknown, error: new (...a: never[]) => Error, message: RegExp): void {
  const before = FakeDeviceBuffer.allocations;
  expect(call).toThrow(error);
  expect(call).toThrow(message);
  expect(FakeDeviceBuffer.allocations).toBe(before);
}

describe('the input kinds (samples.ts INPUT_KINDS)', () => {
  it('describes every kind once: real native, 16-bit, complex native, I/Q', () => {
    expect(Object.keys(INPUT_KINDS).sort()).toEqual(['bf16', 'c128', 'c64', 'ci16', 'ci8', 'f16', 'f32', 'f64', 'i16']);
    for (const [kind, info] of Object.entries(INPUT_KINDS)) {
      expect(info.domain === 'complex', kind).toBe(kind.startsWith('c'));
      expect(info.read === 'sample16', kind).toBe(isSampleDType(kind));
    }
    expect(SAMPLE_DTYPES.every((d) => INPUT_KINDS[d].read === 'sample16')).toBe(true);
    expect([INPUT_KINDS.ci8.dtype, INPUT_KINDS.ci16.dtype]).toEqual(['i8', 'i16']);
    expect([INPUT_KINDS.c64.read, INPUT_KINDS.ci8.read]).toEqual(['native', 'iq']);
  });

  it('I/Q reads at full scale to ±1 by default; a scale must be finite and non-zero', () => {
    expect(sampleScale('ci8', undefined)).toBe(1 / 128);
    expect(sampleScale('ci16', undefined)).toBe(1 / 32768);
    expect(-128 * sampleScale('ci8', undefined)).toBe(-1);
    expect(sampleScale('ci8', 0.25)).toBe(0.25);
    for (const bad of [Number.NaN, 0, Infinity, '1'])
      expect(() => sampleScale('ci16', bad, 'stft scale')).toThrow(/stft scale must be a finite non-zero number/);
  });

  it('names the kind of a buffer: iq: true makes i8/i16 I/Q pairs, and nothing else', () => {
    expect(inputKind(buffer('i16', 4), true, 'stft')).toBe('ci16');
    expect(inputKind(buffer('i8', 4), true, 'stft')).toBe('ci8');
    expect(inputKind(buffer('i16', 4), false, 'stft')).toBe('i16');
    expect(inputKind(buffer('c64', 4), undefined, 'stft')).toBe('c64');
    expect(() => inputKind(buffer('i8', 4), undefined, 'stft')).toThrow(
      /holds i8: read i8 only as interleaved I\/Q pairs \(iq: true\)/,
    );
    expect(() => inputKind(buffer('f32', 4), true, 'welch')).toThrow(
      /welch iq: true reads interleaved i8 or i16 I\/Q pairs; .* holds f32/,
    );
    expect(() => inputKind(buffer('i16', 4), 'yes', 'welch')).toThrow(/welch iq must be a boolean/);
    expect(() => inputKind(buffer('u16', 4), undefined, 'welch')).toThrow(/must be real .* or complex .*, not u16/);
  });
});

describe('inputSeries with complex input', () => {
  it('reads c64/c128 in their own precision and I/Q pairs as complex samples', () => {
    const c = inputSeries(buffer('c128', 12), { batch: 3 }, 'stft', 'real or complex');
    expect(c).toMatchObject({ p: 'f64', kind: 'c128', complex: true, iq: undefined, scale: 1, batch: 3, length: 4 });
    const q = inputSeries(buffer('i16', 12), { batch: 2, iq: true }, 'stft', 'real or complex');
    expect(q).toMatchObject({
      p: 'f32',
      kind: 'ci16',
      complex: true,
      iq: 'i16',
      sample: undefined,
      batch: 2,
      length: 3,
    });
    expect(q.scale).toBe(1 / 32768);
    const q8 = inputSeries(buffer('i8', 8), { iq: true, precision: 'f64', scale: 0.5 }, 'welch', 'real or complex');
    expect(q8).toMatchObject({ p: 'f64', kind: 'ci8', iq: 'i8', scale: 0.5, length: 4 });
    // Real input is unchanged by the complex path.
    expect(inputSeries(buffer('f32', 6), { batch: 2 }, 'stft', 'real or complex')).toMatchObject({
      complex: false,
      length: 3,
    });
  });

  it('refuses complex input to a real-only reader, odd I/Q lengths, batches that do not split, misplaced options', () => {
    expect(() => inputSeries(buffer('c64', 4), {}, 'detrend')).toThrow(ComplexInputError);
    expect(() => inputSeries(buffer('c64', 4), {}, 'detrend')).toThrow(/detrend takes real input only; .* complex c64/);
    expect(() => inputSeries(buffer('i8', 4), { iq: true }, 'cwt')).toThrow(ComplexInputError);
    expect(() => inputSeries(buffer('i16', 7), { iq: true }, 'stft', 'real or complex')).toThrow(
      /stft I\/Q input .* of 7 values is not whole \(I, Q\) pairs/,
    );
    expect(() => inputSeries(buffer('i16', 6), { iq: true, batch: 2 }, 'stft', 'real or complex')).toThrow(
      /3 samples does not split into 2 series/,
    );
    expect(() => inputSeries(buffer('i16', 6), { iq: true, scale: Number.NaN }, 'stft', 'real or complex')).toThrow(
      /stft scale must be a finite non-zero number, got NaN/,
    );
    expect(() => inputSeries(buffer('c64', 4), { scale: 2 }, 'stft', 'real or complex')).toThrow(
      /scale applies to 16-bit and I\/Q input only/,
    );
    expect(() => inputSeries(buffer('c64', 4), { precision: 'f64' }, 'stft', 'real or complex')).toThrow(
      /precision "f64" differs from the input's c64/,
    );
    expect(() =>
      inputSeries(buffer('i8', 4), { iq: true, precision: 'f16' as Any }, 'stft', 'real or complex'),
    ).toThrow(/precision must be 'f32' or 'f64'/);
  });
});

describe('the two-sided geometry of complex input', () => {
  it('has nfft bins per frame (a C2C FFT), all of them in the output, not one-sided', () => {
    for (const [nperseg, nfft] of [
      [8, 8],
      [7, 7],
      [6, 9],
    ]) {
      const g = spectralGeometry(100, { nperseg, nfft }, WELCH_DEFAULTS, true);
      expect(g).toMatchObject({ complex: true, onesided: false, halfBins: nfft, freqs: nfft });
      const real = spectralGeometry(100, { nperseg, nfft, returnOnesided: false }, WELCH_DEFAULTS);
      expect(real).toMatchObject({ complex: false, halfBins: Math.floor(nfft! / 2) + 1, freqs: nfft });
    }
  });

  it('gives frequencies in fftfreq order: 0, the positive ones, then the negative ones', () => {
    for (const n of [8, 7, 2, 1]) {
      const f = spectralFrequencies(spectralGeometry(64, { nperseg: n, fs: 10 }, STFT_DEFAULTS, true));
      const positive = Math.floor((n - 1) / 2) + 1;
      expect(f.length).toBe(n);
      for (let k = 0; k < n; k++) expect(f[k]).toBeCloseTo(((k < positive ? k : k - n) * 10) / n, 12);
    }
  });

  it('refuses an explicit one-sided spectrum of complex input (scipy would switch it off with a warning)', () => {
    expect(() => spectralGeometry(64, { returnOnesided: true }, STFT_DEFAULTS, true)).toThrow(
      /returnOnesided: true needs real input/,
    );
    expect(() => spectralGeometry(64, {}, STFT_DEFAULTS, 'yes' as Any)).toThrow(/complex must be a boolean/);
  });
});

describe('complex taps', () => {
  it('are { re, im } of one length, each part checked as real taps', () => {
    expect(isComplexTaps({ re: [1], im: [0] })).toBe(true);
    expect(isComplexTaps([1, 2])).toBe(false);
    expect(isComplexTaps(Float64Array.of(1))).toBe(false);
    expect(isComplexTaps(null)).toBe(false);
    expect(checkComplexTaps({ re: [1, 2], im: [3, 4] }, 'convolve')).toEqual({
      re: Float64Array.of(1, 2),
      im: Float64Array.of(3, 4),
    });
    expect(() => checkComplexTaps({ re: [1, 2], im: [3] }, 'convolve')).toThrow(FilterCoefficientError);
    expect(() => checkComplexTaps({ re: [1, 2], im: [3] }, 'convolve')).toThrow(
      /real part has 2 values and the imaginary part 1/,
    );
    expect(() => checkComplexTaps({ re: [1, Number.NaN], im: [3, 4] }, 'convolve')).toThrow(
      /convolve \(real part\): b\[1\] must be a finite number/,
    );
  });

  it('correlate conjugates and reverses the taps, as scipy (real taps: reversed)', () => {
    expect(correlationTaps({ re: [1, 2, 3], im: [4, 5, 6] }, 'correlate')).toEqual({
      re: Float64Array.of(3, 2, 1),
      im: Float64Array.of(-6, -5, -4),
    });
    expect(correlationTaps([1, 2, 3], 'correlate')).toEqual(Float64Array.of(3, 2, 1));
  });
});

describe('bad complex input is refused before any device memory is taken', () => {
  const c64 = (n: number): Any => FakeDeviceBuffer.from('c64', new Float32Array(2 * n).fill(0.5));
  const f32 = (n: number): Any => FakeDeviceBuffer.from('f32', new Float32Array(n).fill(0.5));
  const sos = signal.butter(2, 0.3, { output: 'sos' });

  it('names the real-only operation handed complex series', () => {
    const x = c64(16);
    refusedBeforeWork(() => signal.detrend(x), ComplexInputError, /detrend takes real input only/);
    refusedBeforeWork(() => signal.hilbert(x), ComplexInputError, /hilbert takes real input only/);
    refusedBeforeWork(() => signal.resample(x, 8), ComplexInputError, /resample takes real input only/);
    refusedBeforeWork(() => signal.upfirdn([1, 2], x), ComplexInputError, /upfirdn takes real input only/);
    refusedBeforeWork(() => signal.cwt(x, { fs: 1 } as Any), ComplexInputError, /cwt takes real input only/);
  });

  it('refuses what complex input cannot have', () => {
    const x = c64(64);
    const [zi, one, y] = [f32(4), f32(1), f32(64)];
    refusedBeforeWork(
      () => signal.stft(x, { returnOnesided: true }),
      TypeError,
      /returnOnesided: true needs real input/,
    );
    refusedBeforeWork(() => signal.sosfilt(sos, x, { zi } as Any), TypeError, /zi and zf .* real x only/);
    refusedBeforeWork(() => signal.lfilter([1, 2], 1, x, { zi: one } as Any), TypeError, /zi and zf .* real x only/);
    refusedBeforeWork(() => signal.csd(x, y), TypeError, /csd: x holds c64 and y f32; give both real or both complex/);
    refusedBeforeWork(
      () => signal.istft(x, { frames: 8, returnComplex: true }),
      TypeError,
      /returnComplex needs two-sided input/,
    );
    refusedBeforeWork(() => signal.periodogram(x, { nfft: 16 }), TypeError, /needs f32\/f64 input, not c64/);
  });

  it('checks filters and convolutions of complex input (padding, mode, method, taps, output) first', () => {
    // butter(2) as sos pads by 9 samples, 4 taps by 12: 8 samples are too few for either.
    const x = c64(8);
    const [real, small] = [f32(10), c64(4)];
    const iq = FakeDeviceBuffer.from('i16', new Int16Array(9)) as Any;
    refusedBeforeWork(() => signal.sosfiltfilt(sos, x), SignalLengthError, /sosfiltfilt/);
    refusedBeforeWork(() => signal.filtfilt([1, 2, 3, 4], 1, x), SignalLengthError, /filtfilt/);
    refusedBeforeWork(() => signal.convolve(x, [1, 2], { mode: 'middle' as Any }), TypeError, /mode must be 'full'/);
    refusedBeforeWork(() => signal.convolve(x, [1, 2], { method: 'fast' as Any }), TypeError, /method must be 'auto'/);
    refusedBeforeWork(() => signal.correlate(real, { re: [1], im: [] }), FilterCoefficientError, /taps b are empty/);
    refusedBeforeWork(
      () => signal.convolve(x, [1, 2], { output: small }),
      RangeError,
      /convolve output .* holds 4 c64 elements; 9 are needed/,
    );
    refusedBeforeWork(
      () => signal.convolve(real, [1, 2], { scale: 2 } as Any),
      TypeError,
      /convolve: scale and precision apply to I\/Q input \(iq: true\) only; x is real/,
    );
    refusedBeforeWork(() => signal.oaconvolve(iq, [1, 2], { iq: true }), RangeError, /not whole \(I, Q\) pairs/);
  });
});
