/** The serve bench's job mixes and the requests it sends for them. */
import { asciiSignal, type LoadRequest } from './load.js';

/** One job shape the bench sends: series per request, samples per series, the STFT's parameters. */
export interface JobMix {
  batch: number;
  n: number;
  fs: number;
  passBand: readonly [number, number];
  previewBins: number;
}

/** Requests per second: small jobs (4 x 4096), where the per-request overhead shows. */
export const RPS_MIX: JobMix = { batch: 4, n: 4096, fs: 1000, passBand: [20, 200], previewBins: 64 };
/** Samples per second: 16 x 65536 (4 MiB bodies of f32), where the HTTP overhead is bounded by copies. */
export const THROUGHPUT_MIX: JobMix = { batch: 16, n: 65536, fs: 1000, passBand: [20, 200], previewBins: 256 };

/** How samples travel: f32 both ways, or i16 in (2 bytes a sample) and f16 waves out. */
export type WireTypes = 'f32' | 'i16-f16';

/** The body of a mix's request: printable bytes (autocannon's threads carry bodies as strings), 4 or 2 bytes a sample. */
function body(mix: JobMix, wire: WireTypes): Buffer {
  const f32 = asciiSignal(mix.batch * mix.n);
  const bytes = Buffer.from(f32.buffer);
  // Any 16-bit pattern is a valid i16 sample: the first half of the same printable bytes.
  return wire === 'f32' ? bytes : bytes.subarray(0, mix.batch * mix.n * 2);
}

/** A binary /v1/stft request of `mix` against `base`; `extraQuery` is appended to its query (e.g. `&flags=stft,fault`). */
export function stftRequest(base: string, mix: JobMix, extraQuery = '', wire: WireTypes = 'f32'): LoadRequest {
  const types = wire === 'f32' ? 'dtype=f32' : 'dtype=i16&outputDtype=f16';
  return {
    base,
    path: `/v1/stft?${types}&batch=${mix.batch}&fs=${mix.fs}&passBand=${mix.passBand.join(',')}&previewBins=${mix.previewBins}${extraQuery}`,
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
    body: body(mix, wire),
  };
}

/** Random float32 samples: a sine with noise. */
export function randomSignal(n: number): Float32Array {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = Math.sin(i * 0.05) + (Math.random() - 0.5) * 0.2;
  return a;
}
