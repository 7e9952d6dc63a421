/**
 * The hostile requests of the suite (hostile-suite.test.ts), generated from the engine's job
 * parameter table so a new parameter is attacked without a change here: for each row, values its
 * type can never take (wrong types, past its range, past its length), sent in the JSON body, in
 * the query of a binary body and in its `x-tscuda-*` header; keys that would reach prototypes.
 */
import { JOB_PARAMETER_TABLE, type ParameterDef } from '../../../src/engine/parameters.js';

/** One request for `app.inject()`. */
export interface InjectCase {
  category: string;
  name: string;
  method: 'POST' | 'GET' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer | undefined;
}

/** A valid signal the bad parameter rides on (8 series lengths are too short for some routes, 64 is not). */
const SIGNAL = Array.from({ length: 64 }, (_, i) => Math.sin(i / 3));
const BINARY = Buffer.from(Float32Array.from(SIGNAL).buffer);
const OCTET = { 'content-type': 'application/octet-stream' };
const JSON_TYPE = { 'content-type': 'application/json' };

/** Values no parameter of `def`'s type takes. */
export function badValues(def: ParameterDef): unknown[] {
  const wrongShapes: unknown[] = [{}, { nested: { deeper: [1] } }, 'x'.repeat(300)];
  switch (def.type) {
    case 'number':
    case 'integer': {
      const out: unknown[] = [...wrongShapes, 'twelve', [1], true];
      if (def.min !== undefined) out.push(def.min - 1, def.exclusiveMin === true ? def.min : def.min - 0.5);
      if (def.max !== undefined) out.push(def.max + 1, 1e300);
      if (def.type === 'integer') out.push(2.5);
      return out;
    }
    case 'boolean':
      return [...wrongShapes, 'yes', 2, [true]];
    case 'enum':
      return [...wrongShapes, 'bogus', 42, ['f32']];
    case 'string':
      return [{}, 42, ['a'], 'x'.repeat((def.maxLength ?? 200) + 1)];
    case 'band':
      return [...wrongShapes, [1], [3, 1], [1, 2, 3], ['a', 'b'], [-1, 1]];
    case 'bands':
      return [...wrongShapes, [[1]], [[3, 1]], [1, 2], [[1, 2, 3]], [['a', 'b']]];
    case 'numbers':
      return [...wrongShapes, ['x'], [-1], [[1]], [0]];
    case 'flags':
      return [...wrongShapes, ['bogus'], [1], [null], 42];
    case 'window':
      return [...wrongShapes, 'bogus', ['kaiser'], ['kaiser', 'x'], ['gaussian', -1], ['hann', 1], 42];
    case 'object':
      return ['x', 42, [1], { nostage: {} }];
    case 'filter':
      return [
        'x',
        42,
        [1],
        {},
        { sos: [] },
        { taps: [] },
        { taps: [1, 'x'] },
        { sos: [[1, 0, 0, 1, -2.5, 1.5]] },
        { btype: 'lowpass', cutoff: 1000 },
        { btype: 'bandpass', cutoff: 0.1 },
        { sos: [[1, 0, 0, 1, 0, 0]], taps: [1] },
      ];
  }
}

/** The text a bad value takes in a query or a header. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Bad parameters in every place a request may carry them, on the job routes. */
export function badParameterCases(): InjectCase[] {
  const cases: InjectCase[] = [];
  for (const def of JOB_PARAMETER_TABLE as readonly ParameterDef[]) {
    for (const [i, value] of badValues(def).entries()) {
      const route = ['/v1/stft', '/v1/jobs', '/v1/cycles'][i % 3]!;
      if (def.from.includes('body'))
        for (const url of ['/v1/stft', '/v1/jobs', '/v1/wavelet'])
          cases.push({
            category: 'bad parameter',
            name: `${url} body ${def.name}=${asText(value).slice(0, 40)}`,
            method: 'POST',
            url,
            headers: JSON_TYPE,
            payload: JSON.stringify({ signal: SIGNAL, [def.name]: value }),
          });
      const text = asText(value);
      // In a query or a header every value is text: a string parameter's only bad text is a long one.
      if (def.type === 'string' && text.length <= (def.maxLength ?? 200)) continue;
      if (def.from.includes('query') && i % 2 === 0)
        cases.push({
          category: 'bad parameter',
          name: `${route} ?${def.name}=${text.slice(0, 40)}`,
          method: 'POST',
          url: `${route}?${def.name}=${encodeURIComponent(text)}`,
          headers: OCTET,
          payload: BINARY,
        });
      // Header values are Latin-1 without control characters (a client cannot send others).
      if (def.from.includes('header') && i % 2 === 1 && /^[\x20-\x7e]*$/.test(text))
        cases.push({
          category: 'bad parameter',
          name: `${route} x-tscuda-${def.name}: ${text.slice(0, 40)}`,
          method: 'POST',
          url: route,
          headers: { ...OCTET, [`x-tscuda-${def.name.toLowerCase()}`]: text },
          payload: BINARY,
        });
    }
  }
  return cases;
}

/** Keys that would reach `Object.prototype` if copied naively, in the body, the query and headers, on job and batch routes. */
export function prototypeCases(): InjectCase[] {
  const cases: InjectCase[] = [];
  const bodies = [
    `{"signal":[1,2,3,4,5,6,7,8],"__proto__":{"polluted":1}}`,
    `{"signal":[1,2,3,4,5,6,7,8],"stageParams":{"__proto__":{"polluted":1}}}`,
    `{"signal":[1,2,3,4,5,6,7,8],"constructor":{"prototype":{"polluted":1}}}`,
    `{"signal":[1,2,3,4,5,6,7,8],"prototype":{"polluted":1}}`,
    `{"signal":[1,2,3,4,5,6,7,8],"bands":[{"__proto__":[1,2]}]}`,
    `{"items":[[1,2]],"__proto__":{"polluted":1}}`,
    `{"items":[{"a":[1],"b":[2],"t":0.5,"__proto__":{"polluted":1}}]}`,
    `{"__proto__":{"signal":[1,2,3,4,5,6,7,8]}}`,
  ];
  for (const [i, payload] of bodies.entries()) {
    const url = payload.startsWith('{"items"')
      ? payload.includes('"a"')
        ? '/v1/batch/lerp'
        : '/v1/batch/gradient'
      : ['/v1/stft', '/v1/jobs', '/v1/cycles'][i % 3]!;
    cases.push({
      category: 'prototype key',
      name: `${url} ${payload.slice(0, 60)}`,
      method: 'POST',
      url,
      headers: JSON_TYPE,
      payload,
    });
  }
  for (const key of ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString'])
    for (const url of ['/v1/stft', '/v1/jobs']) {
      cases.push({
        category: 'prototype key',
        name: `${url} ?${key}=1`,
        method: 'POST',
        url: `${url}?${key}=1`,
        headers: OCTET,
        payload: BINARY,
      });
      cases.push({
        category: 'prototype key',
        name: `${url} x-tscuda-${key}: 1`,
        method: 'POST',
        url,
        headers: { ...OCTET, [`x-tscuda-${key.toLowerCase()}`]: '1' },
        payload: BINARY,
      });
    }
  for (const id of ['__proto__', 'constructor', 'prototype', '..', '%2e%2e', 'toString'])
    for (const method of ['GET', 'DELETE'] as const)
      cases.push({
        category: 'prototype key',
        name: `${method} /v1/jobs/${id}`,
        method,
        url: `/v1/jobs/${id}`,
        headers: {},
      });
  return cases;
}
