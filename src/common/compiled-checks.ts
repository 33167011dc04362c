import { Bounds, ID_LENGTH_CHARS, NAME_LENGTH_CHARS } from './limits';
import { ID_PATTERN, NAME_PATTERN, toNfc } from './names';

/**
 * A compiled check for a hot DTO: returns the transformed value when the input is certainly valid, or
 * undefined to hand the input to class-validator. It never rejects: every error message still comes
 * from class-validator, so the contract's messages stay exactly the same.
 */
export type CompiledCheck = (value: unknown) => object | undefined;

export type DtoClass = new () => object;

/**
 * What a compiled check accepts in one field, with the limits it reads. The check is compiled from it,
 * and the sync spec (compiled-checks.spec.ts) generates its edge values from it (n - 1, n, n + 1 around
 * every bound) to show that class-validator draws the same lines.
 */
export type FieldRule =
  /** A string matching `pattern`; `length` is the length that pattern allows; `nfc`: an id, taken in NFC. */
  | { kind: 'string'; pattern: RegExp; length: Bounds; optional?: boolean; nfc?: boolean }
  /** An integer in `range`; from the query string it arrives as decimal digits (the ToInt transform). */
  | { kind: 'int'; range: Bounds; nonZero?: boolean; fromQuery?: boolean; optional?: boolean }
  /** A finite number in `range`. */
  | { kind: 'finite'; range: Bounds; optional?: boolean }
  /** An array of `entries` objects, each holding `fields` and built into an `entry` instance. */
  | { kind: 'array'; entries: Bounds; entry: DtoClass; fields: FieldRules; optional?: boolean }
  /** An array of `entries` values, each accepted by `item` (a list of names). */
  | { kind: 'list'; entries: Bounds; item: FieldRule; optional?: boolean }
  /** A query flag: true or false, from the query string as true/1 or false/0 (the ToBool transform). */
  | { kind: 'flag'; optional?: boolean };

export type FieldRules = Readonly<Record<string, FieldRule>>;

export const NAME_FIELD: FieldRule = { kind: 'string', pattern: NAME_PATTERN, length: NAME_LENGTH_CHARS };
export const ID_FIELD: FieldRule = { kind: 'string', pattern: ID_PATTERN, length: ID_LENGTH_CHARS, nfc: true };
/** The same rule, absent allowed (null is still refused, as by the DTO's IsOptionalNotNull). */
export const optional = (rule: FieldRule): FieldRule => ({ ...rule, optional: true });

export interface RegisteredCheck {
  type: DtoClass;
  check: CompiledCheck;
  fields: FieldRules;
}

const registry = new Map<unknown, RegisteredCheck>();

/**
 * Class decorator: compiles a check of the DTO's fields and registers it, for AppValidationPipe and for
 * the sync spec, which walks every registered DTO.
 */
export function CompiledValidation(fields: FieldRules) {
  return (type: DtoClass): void => {
    registry.set(type, { type, check: compile(type, fields), fields });
  };
}

export function compiledCheckOf(metatype: unknown): CompiledCheck | undefined {
  return registry.get(metatype)?.check;
}

export function registeredChecks(): RegisteredCheck[] {
  return [...registry.values()];
}

/** A field reader answers the field's value as the DTO holds it (undefined: absent), or REFUSED. */
const REFUSED = Symbol('refused');
type Reader = (value: unknown) => unknown;

function compile(type: DtoClass, fields: FieldRules): CompiledCheck {
  const read = objectReader(type, fields);
  // ValidationPipe validates an absent value (no body) as {}: valid when every field is optional.
  const emptyIsValid = Object.values(fields).every((rule) => rule.optional);
  return (value) => {
    if (value === undefined || value === null) return emptyIsValid ? Object.create(type.prototype) : undefined;
    return read(value);
  };
}

function objectReader(type: DtoClass, fields: FieldRules): (value: unknown) => object | undefined {
  const keys = new Set(Object.keys(fields));
  // Parallel arrays read by index: destructuring [key, reader] pairs cost every check an iteration per field.
  const names = Object.keys(fields);
  const readers = names.map((key): Reader => readerOf(fields[key]));
  return (value) => {
    if (!isPlainObject(value) || !hasOnlyKeys(value, keys)) return undefined;
    const instance = Object.create(type.prototype) as Record<string, unknown>;
    for (let i = 0; i < names.length; i++) {
      const field = readers[i](value[names[i]]);
      if (field === REFUSED) return undefined;
      if (field !== undefined) instance[names[i]] = field;
    }
    return instance;
  };
}

function readerOf(rule: FieldRule): Reader {
  const read = requiredReaderOf(rule);
  return rule.optional ? (value) => (value === undefined ? undefined : read(value)) : read;
}

function requiredReaderOf(rule: FieldRule): Reader {
  switch (rule.kind) {
    case 'string':
      return stringReader(rule);
    case 'int':
      return intReader(rule);
    case 'finite': {
      const { min, max } = rule.range;
      return (value) =>
        typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max ? value : REFUSED;
    }
    case 'array':
      return arrayReader(rule);
    case 'list':
      return listReader(rule);
    case 'flag':
      return (value) => FLAG_VALUES.get(value) ?? REFUSED;
  }
}

/** What ToBool and IsBoolean accept for a flag, and what they make of it. */
const FLAG_VALUES = new Map<unknown, boolean>([
  [true, true],
  ['true', true],
  ['1', true],
  [false, false],
  ['false', false],
  ['0', false],
]);

function stringReader(rule: Extract<FieldRule, { kind: 'string' }>): Reader {
  const { pattern, length } = rule;
  if (pattern === NAME_PATTERN && length === NAME_LENGTH_CHARS)
    return (value) => (typeof value === 'string' && isNameText(value) ? value : REFUSED);
  if (!rule.nfc) return (value) => (typeof value === 'string' && pattern.test(value) ? value : REFUSED);
  const asciiIds = pattern === ID_PATTERN && length === ID_LENGTH_CHARS;
  return (value) => {
    if (typeof value !== 'string') return REFUSED;
    const ascii = asciiIds ? asciiIdVerdict(value) : undefined;
    if (ascii !== undefined) return ascii ? value : REFUSED;
    const id = toNfc(value);
    return pattern.test(id) ? id : REFUSED;
  };
}

/**
 * NAME_PATTERN's answer read character by character: every route of a board tests its name, and a
 * regular expression's call costs more than the loop.
 */
function isNameText(text: string): boolean {
  if (text.length < NAME_LENGTH_CHARS.min || text.length > NAME_LENGTH_CHARS.max) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const alphanumeric = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    // _ . : -
    if (!alphanumeric && c !== 0x5f && c !== 0x2e && c !== 0x3a && c !== 0x2d) return false;
  }
  return true;
}

/**
 * ID_PATTERN's answer for an id of printable ASCII (most ids), undefined for any other. Such an id is
 * already NFC, none of its characters is of a class the pattern refuses, its length counts its code
 * points, and white space only is spaces only.
 */
function asciiIdVerdict(text: string): boolean | undefined {
  let spacesOnly = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return undefined;
    if (c !== 0x20) spacesOnly = false;
  }
  return !spacesOnly && text.length >= ID_LENGTH_CHARS.min && text.length <= ID_LENGTH_CHARS.max;
}

function intReader(rule: Extract<FieldRule, { kind: 'int' }>): Reader {
  const { min, max } = rule.range;
  const nonZero = rule.nonZero ?? false;
  const accepts = (value: unknown): value is number =>
    typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max && !(nonZero && value === 0);
  if (rule.fromQuery) {
    return (value) => {
      const parsed = queryInt(value);
      return accepts(parsed) ? parsed : REFUSED;
    };
  }
  return (value) => (accepts(value) ? value : REFUSED);
}

function arrayReader(rule: Extract<FieldRule, { kind: 'array' }>): Reader {
  const { min, max } = rule.entries;
  const readEntry = objectReader(rule.entry, rule.fields);
  return (value) => {
    if (!Array.isArray(value) || value.length < min || value.length > max) return REFUSED;
    const entries: object[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const entry = readEntry(value[i]);
      if (entry === undefined) return REFUSED;
      entries[i] = entry;
    }
    return entries;
  };
}

function listReader(rule: Extract<FieldRule, { kind: 'list' }>): Reader {
  const { min, max } = rule.entries;
  const readItem = readerOf(rule.item);
  return (value) => {
    if (!Array.isArray(value) || value.length < min || value.length > max) return REFUSED;
    const items = value.map(readItem);
    return items.some((item) => item === REFUSED || item === undefined) ? REFUSED : items;
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  // A root prototype (Object.prototype of any realm) or none: not a class instance, not a Buffer.
  const proto = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

function hasOnlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

/** A query-string integer as the ToInt transform reads it (up to 15 digits, so exact), or undefined. */
function queryInt(value: unknown): number | undefined {
  return typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : undefined;
}
