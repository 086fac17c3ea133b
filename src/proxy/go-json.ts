// Request bodies decoded the way Toxiproxy's Go server decodes them, so bad input gets the
// same 400 `bad request body: …` messages: unknown fields ignored, null leaves a field as
// it was, a wrong type names the Go struct field it could not fill.
import { ApiError } from './api-error.js';
import { messageOf } from '../util/errors.js';

export type FieldKind = 'string' | 'bool' | 'int' | 'float' | 'float64' | 'object';

const goKinds: Record<FieldKind, string> = {
  string: 'string',
  bool: 'bool',
  int: 'int64',
  float: 'float32',
  float64: 'float64',
  object: 'map[string]interface {}',
};

export function badBody(message: string): ApiError {
  return new ApiError(400, `bad request body: ${message}`);
}

export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw badBody('EOF');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badBody(messageOf(err));
  }
}

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value === 'boolean' ? 'bool' : typeof value;
}

function fits(kind: FieldKind, value: unknown): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'bool':
      return typeof value === 'boolean';
    case 'int':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'float':
    case 'float64':
      return typeof value === 'number' && Number.isFinite(value);
    case 'object':
      return typeof value === 'object' && !Array.isArray(value);
  }
}

/** Copies the fields of `spec` present (and non-null) in `body` onto `target`, type-checked. */
export function decodeInto(
  body: unknown,
  spec: Record<string, FieldKind>,
  goType: string,
  target: Record<string, unknown>,
): void {
  if (body === null) return;
  if (typeof body !== 'object' || Array.isArray(body))
    throw badBody(`json: cannot unmarshal ${jsonKind(body)} into Go value of type ${goType}`);
  const record = body as Record<string, unknown>;
  for (const [key, kind] of Object.entries(spec)) {
    const value = record[key];
    if (value === undefined || value === null) continue;
    if (!fits(kind, value)) {
      const shown = typeof value === 'number' && kind === 'int' ? `number ${value}` : jsonKind(value);
      throw badBody(
        `json: cannot unmarshal ${shown} into Go struct field ${goType}.${key} of type ${goKinds[kind]}`,
      );
    }
    target[key] = value;
  }
}
