import { ArgumentMetadata, Injectable, ValidationPipe } from '@nestjs/common';

/**
 * A compiled check for a hot DTO: returns the transformed value when the input is certainly valid,
 * or undefined to hand the input to class-validator. It never rejects: every error message still
 * comes from class-validator, so the contract's messages stay exactly the same.
 */
export type FastCheck = (value: unknown) => object | undefined;

const fastChecks = new WeakMap<object, FastCheck>();

/** Class decorator: attaches a compiled check to a DTO class. */
export function FastValidated(check: FastCheck): ClassDecorator {
  return (target) => {
    fastChecks.set(target, check);
  };
}

export function fastCheckOf(metatype: unknown): FastCheck | undefined {
  return typeof metatype === 'function' ? fastChecks.get(metatype) : undefined;
}

const OPTIONS = {
  whitelist: true,
  forbidNonWhitelisted: true,
  transform: true,
  stopAtFirstError: true,
  forbidUnknownValues: true,
} as const;

/** The one global pipe: unknown fields rejected, payloads transformed into their DTO classes. */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super(OPTIONS);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const accepted = fastCheckOf(metadata.metatype)?.(value);
    return accepted ?? super.transform(value, metadata);
  }
}

/** The plain class-validator pipe, with the same options (the reference the fast checks are tested against). */
export function createReferenceValidationPipe(): ValidationPipe {
  return new ValidationPipe(OPTIONS);
}

/** Helpers for writing fast checks. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  // A root prototype (Object.prototype of any realm) or none: not a class instance, not a Buffer.
  const proto = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

export function hasOnlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

/** Builds an instance of `type` holding the given own properties (what class-transformer would build). */
export function instanceOf<T extends object>(type: new () => T, fields: Record<string, unknown>): T {
  const instance = Object.create(type.prototype) as T;
  for (const key of Object.keys(fields))
    if (fields[key] !== undefined) (instance as Record<string, unknown>)[key] = fields[key];
  return instance;
}

/** A query-string integer as the ToInt transform reads it, or undefined. */
export function queryInt(value: unknown): number | undefined {
  return typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : undefined;
}

/** A check for an object whose every field is required and passes its rule (route params, small bodies). */
export function requiredFields(type: new () => object, rules: Record<string, (value: unknown) => boolean>): FastCheck {
  const keys = new Set(Object.keys(rules));
  return (value) => {
    if (!isPlainObject(value) || !hasOnlyKeys(value, keys)) return undefined;
    for (const key of keys) if (!rules[key](value[key])) return undefined;
    return instanceOf(type, value);
  };
}
