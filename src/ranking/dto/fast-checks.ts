import { ID_PATTERN, NAME_PATTERN } from '../../common/names';
import { FastCheck, hasOnlyKeys, instanceOf, isPlainObject, queryInt, requiredFields } from '../../common/validation';

/**
 * Compiled checks for the hot ranking DTOs (see AppValidationPipe): each accepts only input that
 * class-validator would accept too, and builds the same value; anything else goes to class-validator.
 */
export const MAX_AMOUNT = 1_000_000;

const isName = (value: unknown): value is string => typeof value === 'string' && NAME_PATTERN.test(value);
const isId = (value: unknown): value is string => typeof value === 'string' && ID_PATTERN.test(value);
const isAmount = (value: unknown) =>
  value === undefined ||
  (typeof value === 'number' && Number.isInteger(value) && value !== 0 && Math.abs(value) <= MAX_AMOUNT);
const inRange = (value: number | undefined, min: number, max: number) =>
  value !== undefined && value >= min && value <= max;

/** Required name or id fields (route params, a like's userId). */
export const idFieldsCheck = (type: new () => object, fields: Record<string, 'name' | 'id'>) =>
  requiredFields(
    type,
    Object.fromEntries(Object.entries(fields).map(([key, kind]) => [key, kind === 'name' ? isName : isId])),
  );

export function amountBodyCheck(type: new () => object): FastCheck {
  const keys = new Set(['amount']);
  return (value) => {
    if (value === undefined || value === null) return instanceOf(type, {});
    if (!isPlainObject(value) || !hasOnlyKeys(value, keys) || !isAmount(value.amount)) return undefined;
    return instanceOf(type, value);
  };
}

export function batchBodyCheck(type: new () => object, entryType: new () => object): FastCheck {
  const keys = new Set(['items']);
  const entryKeys = new Set(['item', 'amount']);
  return (value) => {
    if (!isPlainObject(value) || !hasOnlyKeys(value, keys)) return undefined;
    const items = value.items;
    if (!Array.isArray(items) || items.length < 1 || items.length > 1000) return undefined;
    const entries: object[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      const entry: unknown = items[i];
      if (!isPlainObject(entry) || !hasOnlyKeys(entry, entryKeys) || !isId(entry.item) || !isAmount(entry.amount))
        return undefined;
      entries[i] = instanceOf(entryType, entry);
    }
    return instanceOf(type, { items: entries });
  };
}

/** A query of an optional window name plus optional integer fields within [min, max]. */
export function windowQueryCheck(type: new () => object, ints: Record<string, [number, number]> = {}): FastCheck {
  const keys = new Set(['window', ...Object.keys(ints)]);
  return (value) => {
    if (!isPlainObject(value) || !hasOnlyKeys(value, keys)) return undefined;
    if (value.window !== undefined && !isName(value.window)) return undefined;
    const fields: Record<string, unknown> = { window: value.window };
    for (const [key, [min, max]] of Object.entries(ints)) {
      if (value[key] === undefined) continue;
      const parsed = queryInt(value[key]);
      if (!inRange(parsed, min, max)) return undefined;
      fields[key] = parsed;
    }
    return instanceOf(type, fields);
  };
}
