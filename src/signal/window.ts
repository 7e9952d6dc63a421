/**
 * Window functions with scipy.signal.get_window's names, parameters and defaults (CUDA-free).
 *
 * Periodic ("fftbins=True", DFT-even) windows are the default, as in scipy: the symmetric window
 * of n + 1 points with its last point dropped. `{ sym: true }` gives the symmetric window used
 * for filter design.
 */

/** A window as scipy.signal.get_window takes it: a name, or `[name, parameter]`. */
export type WindowSpec = string | readonly [name: string, parameter: number];

/** Thrown for a window name scipy does not know (or tscuda does not implement). */
export class UnknownWindowError extends TypeError {
  override name = 'UnknownWindowError';
  constructor(readonly window: string) {
    super(
      `window "${window}" is unknown; expected one of ${WINDOW_NAMES.join(', ')} (or an alias such as 'han', 'box', 'ksr')`,
    );
  }
}

/** Thrown when a window needs a parameter that was not given, or got a bad one. */
export class WindowParameterError extends TypeError {
  override name = 'WindowParameterError';
}

/** The canonical names, as scipy spells them. */
export const WINDOW_NAMES = [
  'hann',
  'hamming',
  'blackman',
  'blackmanharris',
  'bartlett',
  'boxcar',
  'flattop',
  'nuttall',
  'triang',
  'cosine',
  'tukey',
  'kaiser',
  'gaussian',
] as const;
export type WindowName = (typeof WINDOW_NAMES)[number];

/** scipy's aliases (scipy.signal.windows._windows._win_equiv). */
const ALIASES: Readonly<Record<string, WindowName>> = {
  hann: 'hann',
  han: 'hann',
  hamming: 'hamming',
  hamm: 'hamming',
  ham: 'hamming',
  blackman: 'blackman',
  black: 'blackman',
  blk: 'blackman',
  blackmanharris: 'blackmanharris',
  blackharr: 'blackmanharris',
  bkh: 'blackmanharris',
  bartlett: 'bartlett',
  bart: 'bartlett',
  brt: 'bartlett',
  boxcar: 'boxcar',
  box: 'boxcar',
  ones: 'boxcar',
  rect: 'boxcar',
  rectangular: 'boxcar',
  flattop: 'flattop',
  flat: 'flattop',
  flt: 'flattop',
  nuttall: 'nuttall',
  nutl: 'nuttall',
  nut: 'nuttall',
  triang: 'triang',
  triangle: 'triang',
  tri: 'triang',
  cosine: 'cosine',
  halfcosine: 'cosine',
  tukey: 'tukey',
  tuk: 'tukey',
  kaiser: 'kaiser',
  ksr: 'kaiser',
  gaussian: 'gaussian',
  gauss: 'gaussian',
  gss: 'gaussian',
};

/** Windows that cannot be named without their parameter (scipy raises "needs one or more parameters"). */
const NEEDS_PARAMETER: ReadonlySet<WindowName> = new Set(['kaiser', 'gaussian']);

/** Cosine-sum coefficients (scipy.signal.windows.general_cosine). */
const COSINE_SUMS: Readonly<Partial<Record<WindowName, readonly number[]>>> = {
  hann: [0.5, 0.5],
  hamming: [0.54, 0.46],
  blackman: [0.42, 0.5, 0.08],
  blackmanharris: [0.35875, 0.48829, 0.14128, 0.01168],
  nuttall: [0.3635819, 0.4891775, 0.1365995, 0.0106411],
  flattop: [0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368],
};

export interface WindowOptions {
  /** Symmetric window (scipy's fftbins=False). Default false: periodic, for spectral analysis. */
  sym?: boolean | undefined;
}

/** A resolved window spec: canonical name and its parameter (undefined where it takes none). */
export interface ResolvedWindow {
  name: WindowName;
  parameter: number | undefined;
}

/** Validates a window spec and resolves aliases; throws UnknownWindowError or WindowParameterError. */
export function resolveWindow(spec: WindowSpec): ResolvedWindow {
  let rawName: unknown;
  let parameter: number | undefined;
  if (typeof spec === 'string') rawName = spec;
  else if (Array.isArray(spec)) {
    if (spec.length !== 2)
      throw new WindowParameterError(
        `window spec must be a name or [name, parameter], got an array of ${spec.length} items`,
      );
    rawName = spec[0];
    parameter = spec[1] as number;
    if (typeof parameter !== 'number' || !Number.isFinite(parameter))
      throw new WindowParameterError(
        `window "${String(rawName)}" parameter must be a finite number, got ${String(parameter)}`,
      );
  } else
    throw new WindowParameterError(
      `window must be a name or [name, parameter], got ${spec === null ? 'null' : typeof spec}`,
    );
  if (typeof rawName !== 'string')
    throw new WindowParameterError(`window name must be a string, got ${typeof rawName}`);
  const key = rawName.toLowerCase();
  const name = Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined;
  if (!name) throw new UnknownWindowError(rawName);
  if (parameter === undefined && NEEDS_PARAMETER.has(name)) {
    throw new WindowParameterError(
      `the '${name}' window needs its parameter (${name === 'kaiser' ? 'beta' : 'std'}): pass ['${name}', value]`,
    );
  }
  if (parameter !== undefined && !NEEDS_PARAMETER.has(name) && name !== 'tukey') {
    throw new WindowParameterError(`the '${name}' window takes no parameter, got [${name}, ${parameter}]`);
  }
  if (name === 'gaussian' && parameter !== undefined && !(parameter > 0))
    throw new WindowParameterError(`gaussian window std must be > 0, got ${parameter}`);
  if (name === 'tukey' && parameter === undefined) parameter = 0.5;
  return { name, parameter };
}

/** A stable string for a window spec (cache keys): canonical name and parameter. */
export function windowKey(spec: WindowSpec): string {
  const r = resolveWindow(spec);
  return r.parameter === undefined ? r.name : `${r.name}(${r.parameter})`;
}

/** numpy.linspace(start, stop, num) as numpy computes it (step multiply, last point exact). */
function linspace(start: number, stop: number, num: number): Float64Array {
  const out = new Float64Array(num);
  const div = num - 1;
  const step = (stop - start) / div;
  for (let i = 0; i < num; i++) out[i] = i * step + start;
  if (num > 1) out[num - 1] = stop;
  return out;
}

/**
 * The modified Bessel function of the first kind, order 0 (for the Kaiser window): the power
 * series sum_k ((x/2)^k / k!)^2, whose terms are all positive, so it is accurate to a few ulps.
 */
export function besselI0(x: number): number {
  const q = (x * x) / 4;
  let term = 1;
  let sum = 1;
  for (let k = 1; k < 1000; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

/** Below this, besselI0's series is used as is (I0(700) ~ 1.5e302, still a double). */
const I0_SERIES_LIMIT = 700;

/**
 * ln I0(x), for any x: the series' logarithm below I0_SERIES_LIMIT, above it the asymptotic
 * expansion e^x / sqrt(2 pi x) * sum_k ((2k-1)!!)^2 / (k! (8x)^k), whose terms at x >= 700 fall
 * below 1e-17 within a few steps.
 */
export function logBesselI0(x: number): number {
  const ax = Math.abs(x);
  if (ax < I0_SERIES_LIMIT) return Math.log(besselI0(ax));
  let term = 1;
  let sum = 1;
  for (let k = 1; k < 30; k++) {
    term *= (2 * k - 1) ** 2 / (k * 8 * ax);
    sum += term;
    if (term < 1e-17) break;
  }
  return ax - 0.5 * (Math.log(2 * Math.PI) + Math.log(ax)) + Math.log(sum);
}

/** The symmetric window of m points (m >= 2), as scipy's functions compute it before truncation. */
function symmetric(name: WindowName, parameter: number | undefined, m: number): Float64Array {
  const w = new Float64Array(m);
  const coeffs = COSINE_SUMS[name];
  if (coeffs) {
    const fac = linspace(-Math.PI, Math.PI, m);
    for (let i = 0; i < m; i++) {
      let s = 0;
      for (let k = 0; k < coeffs.length; k++) s += coeffs[k]! * Math.cos(k * fac[i]!);
      w[i] = s;
    }
    return w;
  }
  switch (name) {
    case 'boxcar':
      return w.fill(1);
    case 'bartlett':
      for (let i = 0; i < m; i++) w[i] = i <= (m - 1) / 2 ? (2 * i) / (m - 1) : 2 - (2 * i) / (m - 1);
      return w;
    case 'triang': {
      const half = Math.floor((m + 1) / 2);
      for (let i = 1; i <= half; i++) {
        const v = m % 2 === 0 ? (2 * i - 1) / m : (2 * i) / (m + 1);
        w[i - 1] = v;
        w[m - i] = v;
      }
      return w;
    }
    case 'cosine':
      for (let i = 0; i < m; i++) w[i] = Math.sin((Math.PI / m) * (i + 0.5));
      return w;
    case 'tukey': {
      const alpha = parameter!;
      const width = Math.floor((alpha * (m - 1)) / 2);
      for (let i = 0; i < m; i++) {
        if (i <= width) w[i] = 0.5 * (1 + Math.cos(Math.PI * (-1 + (2 * i) / alpha / (m - 1))));
        else if (i < m - width - 1) w[i] = 1;
        else w[i] = 0.5 * (1 + Math.cos(Math.PI * (-2 / alpha + 1 + (2 * i) / alpha / (m - 1))));
      }
      return w;
    }
    case 'kaiser': {
      const beta = Math.abs(parameter!);
      const alpha = (m - 1) / 2;
      const x = (i: number): number => beta * Math.sqrt(1 - ((i - alpha) / alpha) ** 2);
      if (beta < I0_SERIES_LIMIT) {
        const den = besselI0(beta);
        for (let i = 0; i < m; i++) w[i] = besselI0(x(i)) / den;
      } else {
        // I0(beta) overflows a double past ~713 (scipy gives NaN there): the ratio in logarithms.
        const den = logBesselI0(beta);
        for (let i = 0; i < m; i++) w[i] = Math.exp(logBesselI0(x(i)) - den);
      }
      return w;
    }
    case 'gaussian': {
      const sig2 = 2 * parameter! * parameter!;
      for (let i = 0; i < m; i++) {
        const n = i - (m - 1) / 2;
        w[i] = Math.exp(-(n * n) / sig2);
      }
      return w;
    }
    default:
      throw new UnknownWindowError(name);
  }
}

/**
 * scipy.signal.get_window(spec, n, fftbins=!sym): the window of `n` points as float64.
 * Periodic by default. Throws UnknownWindowError, WindowParameterError, or RangeError for a bad `n`.
 */
export function getWindow(spec: WindowSpec, n: number, options: WindowOptions = {}): Float64Array {
  const { name, parameter } = resolveWindow(spec);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new RangeError(`window length n must be a non-negative integer, got ${n}`);
  if (typeof options !== 'object' || options === null)
    throw new TypeError(
      `getWindow: options must be an object ({ sym }), got ${options === null ? 'null' : typeof options}`,
    );
  const sym = options.sym ?? false;
  if (typeof sym !== 'boolean') throw new TypeError(`getWindow: sym must be a boolean, got ${JSON.stringify(sym)}`);
  if (n <= 1) return new Float64Array(n).fill(1);
  if (name === 'tukey') {
    if (parameter! <= 0) return new Float64Array(n).fill(1);
    if (parameter! >= 1) return getWindow('hann', n, options);
  }
  const m = sym ? n : n + 1;
  const w = symmetric(name, parameter, m);
  return sym ? w : w.slice(0, n);
}

/** sum(w) of getWindow(spec, n): the coherent gain a windowed amplitude is divided by. */
export function windowSum(spec: WindowSpec, n: number, options: WindowOptions = {}): number {
  let s = 0;
  for (const v of getWindow(spec, n, options)) s += v;
  return s;
}
