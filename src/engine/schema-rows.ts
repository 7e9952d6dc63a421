/**
 * The shapes of the job schema's rows (job-schema.ts holds the rows themselves): a job parameter,
 * a built-in flag, a result array. The engine's types (types.ts, normalized-job.ts), its
 * validation, the server's schema and coercion, the queue's codec and the lane's buffer list all
 * read the rows through these shapes. CUDA-free, and free of the engine's other types (the rows
 * must not depend on what is derived from them).
 */

/**
 * How a parameter's value is read and checked:
 * - `number`: a finite number within `min`/`max` (`exclusiveMin`: strictly above `min`);
 * - `integer`: a safe integer within `min`/`max`;
 * - `boolean`: true or false (strings: `true|false|1|0`);
 * - `enum`: one of `values` (strings: the value itself, `false`/`none` for false);
 * - `string`: text of at most `maxLength` characters;
 * - `band`: a `[low, high]` pair in Hz (strings: `low,high` or JSON);
 * - `bands`: an array of bands (strings: `low:high,low:high` or JSON);
 * - `numbers`: an array of numbers (strings: `a,b,c` or JSON);
 * - `flags`: an array of flag names (strings: `stft,cycles`);
 * - `window`: a window name or `[name, parameter]` (strings: `hann` or `kaiser,8.6`);
 * - `object`: a JSON object (strings: JSON);
 * - `filter`: a filter applied before the FFT (job-filter.ts; strings: JSON).
 */
export type ParameterType =
  | 'number'
  | 'integer'
  | 'boolean'
  | 'enum'
  | 'string'
  | 'band'
  | 'bands'
  | 'numbers'
  | 'flags'
  | 'window'
  | 'object'
  | 'filter';

/** Where a request may carry a parameter: the JSON body, the query string, an `x-tscuda-<name>` header. */
export type ParameterSource = 'body' | 'query' | 'header';

/**
 * What the normalized job holds for a parameter:
 * - `default`: the value given, else `value` (the row's default), with the value's own type;
 * - `optional`: the value given, or undefined;
 * - `custom`: something validation computes (a resolved window, the framing, the designed filter),
 *   declared by hand in normalized-job.ts.
 */
export type NormalForm = 'default' | 'optional' | 'custom';

/** One parameter row. */
export interface ParameterDef {
  /** The name on the wire (JSON property, query parameter, `x-tscuda-<lower-case name>` header). */
  readonly name: string;
  /** The JobSpec field it fills; null for a transport-only parameter (the server reads it itself). */
  readonly field: string | null;
  readonly type: ParameterType;
  /** `number`/`integer`: the smallest value allowed (or the bound, with `exclusiveMin`). */
  readonly min?: number | undefined;
  readonly exclusiveMin?: boolean | undefined;
  /** `number`/`integer`: the largest value allowed. */
  readonly max?: number | undefined;
  /** `enum`: the values allowed. */
  readonly values?: readonly (string | boolean)[] | undefined;
  /** `string`: its longest length. */
  readonly maxLength?: number | undefined;
  /** The default, as documentation says it. */
  readonly default: string;
  /** What it means. */
  readonly help: string;
  /** Where a request may carry it. */
  readonly from: readonly ParameterSource[];
  /** What the normalized job holds for it (default `custom`). */
  readonly normal?: NormalForm | undefined;
  /** With `normal: 'default'`: the value filled in when the job gives none. */
  readonly value?: unknown;
  /**
   * Whether two jobs that differ in it compute different things on each series (default true): the
   * server fuses requests only where every such parameter is equal. False for the batch and the
   * per-request bookkeeping (label, timeout).
   */
  readonly perSeries?: boolean | undefined;
}

/** One built-in flag row. */
export interface FlagDef {
  /** The flag's name (in `flags`, and the synchronous endpoint `/v1/<name>`). */
  readonly name: string;
  /** What it computes. */
  readonly help: string;
  /** JobSpec fields the flag cannot run without (validation refuses the job naming the first missing one). */
  readonly requires?: readonly string[] | undefined;
  /** Whether 16-bit samples (i16/f16/bf16) may be given to it; false: f32/f64 data only. */
  readonly sixteenBit: boolean;
  /** Whether a framed stft job (nperseg) may ask for it besides stft. */
  readonly framed: boolean;
  /**
   * Whether a lane may replay its compute from a CUDA graph (the wavelet builds its tables on the
   * way and its FFT sizes vary; filters and envelopes allocate their scratch in the signal layer).
   */
  readonly capturable: boolean;
}

/** Element type of a result array: the engine's precision (`real`), a wave that `outputDtype` may round to 16 bits (`wave`), or float64. */
export type OutputElement = 'real' | 'wave' | 'f64';

/**
 * How a result array's values lie per series, which names its shape on the wire:
 * - `series`: N values (B x N);
 * - `rows`: a number of rows of N values each (B x rows x N);
 * - `spectrum`: bins, or bins x frames for a framed stft (B x bins [x frames]);
 * - `values`: some values per series (B x values).
 */
export type OutputLayout = 'series' | 'rows' | 'spectrum' | 'values';

/** What of a normalized job decides the size of its result arrays (a NormalizedJob has it all). */
export interface ResultShapeOf {
  /** The flags asked for (a result array is returned when its flag is among them). */
  readonly flags: readonly string[];
  readonly batch: number;
  readonly length: number;
  readonly previewBins: number;
  readonly framing: { readonly frames: number } | undefined;
  readonly bands: readonly unknown[];
  readonly bandWaves: boolean;
  readonly waveletBands: boolean;
  readonly freqs: readonly unknown[];
  readonly q: number | undefined;
  /** 'f16'/'bf16': the waves are returned as raw 16-bit bits. */
  readonly outputDtype: 'f16' | 'bf16' | undefined;
}

/** One result-array row. */
export interface OutputDef {
  /** The JobResult field (and `into` field), in the order of a binary response. */
  readonly field: string;
  /** The flag that produces it. */
  readonly flag: string;
  readonly element: OutputElement;
  readonly layout: OutputLayout;
  /** Values per series for a job that asks for the flag; 0: the job does not return it (bandWaves: false). */
  readonly perSeries: (job: ResultShapeOf) => number;
  /** What it holds (documentation). */
  readonly help: string;
}
