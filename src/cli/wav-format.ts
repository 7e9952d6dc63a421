/**
 * What a WAV's `fmt ` chunk says the samples are, as scipy.io.wavfile reads it: the format tag
 * (PCM 1 or IEEE float 3), taken from the SubFormat GUID when the tag is WAVE_FORMAT_EXTENSIBLE
 * (0xFFFE), and the bits per sample. wavefile (signal-input.ts decodes through it) chooses its
 * decoding from the bits alone, so it reads an extensible 32-bit float file as 32-bit integers and
 * a 16-bit float file as 16-bit PCM: both numbers without meaning. The encoding decided here is
 * the one the reader trusts. Pure and CUDA-free.
 */

/** The wavefile fields read here (wavefile's own typings are looser than its object). */
export interface WaveFileLike {
  bitDepth: string;
  fmt: object;
  data: { chunkSize: number; samples: Uint8Array };
  getSamples(interleaved?: boolean, OutputObject?: Function): Float64Array | Float64Array[];
}

/** The sample encodings the CLI decodes, in wavefile's names: unsigned 8, signed 16/24/32 PCM, float 32/64. */
export type WavEncoding = '8' | '16' | '24' | '32' | '32f' | '64';

const PCM = 1;
const IEEE_FLOAT = 3;
const EXTENSIBLE = 0xfffe;

/**
 * The last 12 bytes of KSDATAFORMAT_SUBTYPE_{PCM,IEEE_FLOAT} ({0000XXXX-0000-0010-8000-00AA00389B71}),
 * as wavefile reads them: three little-endian 32-bit words after the first. scipy takes the tag from a
 * SubFormat only when it ends so; any other GUID names a format it does not know.
 */
const SUBFORMAT_TAIL = [0x00100000, 0xaa000080, 0x719b3800] as const;

/** A format tag's name for a message. */
const FORMAT_NAMES: Readonly<Record<number, string>> = {
  2: 'ADPCM',
  6: 'A-law',
  7: 'mu-law',
  0x11: 'IMA ADPCM',
  0x55: 'MP3',
};

/** The fmt chunk's numbers wavefile read. */
export function wavFmt(wav: WaveFileLike): { numChannels: number; sampleRate: number; bitsPerSample: number } {
  const fmt = wav.fmt as { numChannels?: unknown; sampleRate?: unknown; bitsPerSample?: unknown };
  return {
    numChannels: Number(fmt.numChannels),
    sampleRate: Number(fmt.sampleRate),
    bitsPerSample: Number(fmt.bitsPerSample),
  };
}

/** The real format tag: the fmt chunk's, or for WAVE_FORMAT_EXTENSIBLE the one its SubFormat GUID carries (undefined when it carries none scipy knows). */
export function wavFormatTag(wav: WaveFileLike): number | undefined {
  const fmt = wav.fmt as { audioFormat?: unknown; subformat?: unknown };
  const tag = Number(fmt.audioFormat);
  if (tag !== EXTENSIBLE) return tag;
  const guid = Array.isArray(fmt.subformat) ? (fmt.subformat as unknown[]).map(Number) : [];
  // The first two bytes are the tag; the next two are zero in every standard SubFormat.
  if (guid.length !== 4 || guid[0]! >>> 16 !== 0 || SUBFORMAT_TAIL.some((word, i) => guid[i + 1] !== word))
    return undefined;
  return guid[0]!;
}

/**
 * The encoding the samples are in, or the name of one that cannot be read (for "WAV sample
 * encoding "..." is not supported"): 8/16/24/32-bit PCM and 32/64-bit float, as the CLI documents; scipy
 * refuses 16-bit float too, and 64-bit PCM is no float even where wavefile would read it as one.
 */
export function wavEncoding(wav: WaveFileLike): { encoding: WavEncoding } | { unsupported: string } {
  const tag = wavFormatTag(wav);
  const bits = wavFmt(wav).bitsPerSample;
  if (tag === PCM && (bits === 8 || bits === 16 || bits === 24 || bits === 32))
    return { encoding: String(bits) as WavEncoding };
  if (tag === IEEE_FLOAT && (bits === 32 || bits === 64)) return { encoding: bits === 32 ? '32f' : '64' };
  if (tag === PCM) return { unsupported: `${bits}-bit PCM` };
  if (tag === IEEE_FLOAT) return { unsupported: `${bits}-bit float` };
  if (tag === undefined) return { unsupported: 'WAVE_FORMAT_EXTENSIBLE of an unknown SubFormat' };
  return { unsupported: FORMAT_NAMES[tag] ?? `format 0x${tag.toString(16)}` };
}

/**
 * The warning for a data chunk that is not what its header says: shorter than it claims (a file cut
 * off while written), or not whole frames (an odd byte count of 16-bit samples). wavefile reads the
 * whole frames there are; the user should know the signal is not all the header promised.
 */
export function wavDataWarning(wav: WaveFileLike, frameBytes: number, name: string): string | undefined {
  const claimed = wav.data.chunkSize;
  const held = wav.data.samples.byteLength;
  const read = held - (held % frameBytes);
  if (claimed > held) return `${name}: WAV data chunk says ${claimed} bytes, file holds ${held}; reading ${read}`;
  if (read !== held)
    return `${name}: WAV data chunk of ${held} bytes is not a whole number of ${frameBytes}-byte frames; reading ${read}`;
  return undefined;
}

/**
 * The channels as `encoding` says, from wavefile's decoding by bit depth: where wavefile read
 * 32-bit float samples as 32-bit integers (an extensible file), their bits are taken again as
 * float32, exactly, with wavefile's own byte order already applied.
 */
export function asEncoded(channels: Float64Array[], wav: WaveFileLike, encoding: WavEncoding): Float64Array[] {
  if (encoding !== '32f' || wav.bitDepth === '32f') return channels;
  return channels.map((ch) => Float64Array.from(new Float32Array(Int32Array.from(ch).buffer)));
}
