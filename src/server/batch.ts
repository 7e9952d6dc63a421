/**
 * The small-item endpoints `POST /v1/batch/{gradient,lerp,slerp}`: items are checked here (a
 * bad item refuses its own request, never a batch of other callers) and handed to a batcher
 * for their kind and vector length, created on first use and kept.
 */
import { HttpError, invalidField, sampleOutOfRange } from './errors.js';

/** The batch endpoints. */
export type BatchKind = 'gradient' | 'lerp' | 'slerp';

/** The batch kinds, in route order. */
export const BATCH_KINDS: readonly BatchKind[] = ['gradient', 'lerp', 'slerp'];

/** A lerp/slerp item: two vectors and where between them (t in [0, 1]). */
export interface InterpolationInput {
  a: ArrayLike<number>;
  b: ArrayLike<number>;
  t: number;
}

/** The item type of each kind. */
export interface BatchItems {
  gradient: ArrayLike<number>;
  lerp: InterpolationInput;
  slerp: InterpolationInput;
}

/** What the server needs of a batcher (GpuBatcher has it). */
export interface BatchSubmitter<I> {
  /** Resolves with one output vector per item, in item order. The server passes `wait: false` (a full queue rejects with BatcherFullError: 429) and aborts `signal` when the request times out; a closed batcher rejects with BatcherClosedError (503). */
  submit(
    items: readonly I[],
    options?: { wait?: boolean | undefined; signal?: AbortSignal | undefined },
  ): Promise<Float32Array[]>;
  readonly metrics?: { batches: number; items: number; fillRate: number; queued: number } | undefined;
  /** Drains what was accepted and frees the batcher's resources; called once, at server shutdown, after the in-flight requests have settled. */
  close?(): Promise<void>;
}

/** Makes the batcher of one kind for vectors of `dim` floats; absent kinds answer 503. */
export type BatchFactories = { [K in BatchKind]?: (dim: number) => BatchSubmitter<BatchItems[K]> };

function vector(field: string, v: unknown, dim: number | undefined): Float32Array {
  if (!Array.isArray(v)) throw invalidField(field, 'must be an array of numbers');
  if (v.length === 0) throw invalidField(field, 'is empty');
  if (dim !== undefined && v.length !== dim)
    throw invalidField(
      field,
      `has ${v.length} values, the first item ${dim}: every vector of a request has the same length`,
    );
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const x: unknown = v[i];
    if (typeof x !== 'number')
      throw invalidField(`${field}[${i}]`, `must be a number, got ${x === null ? 'null' : typeof x}`);
    out[i] = x;
    // As /v1/stft's samples: a value f32 cannot hold is refused, not turned into Infinity.
    if (!Number.isFinite(out[i]!)) throw sampleOutOfRange(`${field}[${i}]`, x, 'f32');
  }
  return out;
}

/** Checks a batch request's `items` and returns them typed, with their vector length. */
export function parseBatchItems<K extends BatchKind>(
  kind: K,
  body: unknown,
  maxItems: number,
  maxDim: number,
): { items: BatchItems[K][]; dim: number } {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw invalidField('body', 'must be a JSON object {"items": [...]}');
  for (const key of Object.keys(body)) {
    if (key !== 'items' && key !== 'timeout')
      throw new HttpError(400, 'unknown_field', `${key}: unknown parameter (known: items, timeout)`, { field: key });
  }
  const items: unknown = (body as { items?: unknown }).items;
  if (!Array.isArray(items)) throw invalidField('items', 'must be an array');
  if (items.length === 0) throw invalidField('items', 'is empty');
  if (items.length > maxItems)
    throw new HttpError(413, 'too_many_items', `items: ${items.length} items, at most ${maxItems} per request`, {
      field: 'items',
    });
  let dim: number | undefined;
  const out: unknown[] = [];
  for (let i = 0; i < items.length; i++) {
    const item: unknown = items[i];
    if (kind === 'gradient') {
      const v = vector(`items[${i}]`, item, dim);
      dim = v.length;
      out.push(v);
    } else {
      if (item === null || typeof item !== 'object' || Array.isArray(item))
        throw invalidField(`items[${i}]`, 'must be {"a": [...], "b": [...], "t": number}');
      const o = item as Record<string, unknown>;
      for (const key of Object.keys(o))
        if (key !== 'a' && key !== 'b' && key !== 't')
          throw new HttpError(400, 'unknown_field', `items[${i}].${key}: unknown field (known: a, b, t)`, {
            field: `items[${i}].${key}`,
          });
      const a = vector(`items[${i}].a`, o.a, dim);
      dim = a.length;
      const b = vector(`items[${i}].b`, o.b, dim);
      const t = o.t;
      if (typeof t !== 'number' || !Number.isFinite(t) || t < 0 || t > 1)
        throw invalidField(
          `items[${i}].t`,
          `must be a number in [0, 1], got ${typeof t === 'string' ? JSON.stringify(t) : String(t)}`,
        );
      out.push({ a, b, t });
    }
    if (dim !== undefined && dim > maxDim)
      throw new HttpError(413, 'vector_too_long', `items[${i}]: vectors of ${dim} values, at most ${maxDim}`, {
        field: `items[${i}]`,
      });
  }
  return { items: out as BatchItems[K][], dim: dim! };
}
