import { ID_LENGTH_CHARS, NAME_LENGTH_CHARS } from './limits';

/** Names that end up inside Redis key names: never braces (they would break the hash tag), never spaces. */
export const NAME_PATTERN = new RegExp(`^[A-Za-z0-9_.:-]{${NAME_LENGTH_CHARS.min},${NAME_LENGTH_CHARS.max}}$`);
export const NAME_RULE = `${NAME_LENGTH_CHARS.min}-${NAME_LENGTH_CHARS.max} characters of A-Z a-z 0-9 _ . : -`;

/** Item and user ids are members and fields, never key names: any printable characters (code points, hence `u`). */
export const ID_PATTERN = new RegExp(`^[^\\x00-\\x1f\\x7f]{${ID_LENGTH_CHARS.min},${ID_LENGTH_CHARS.max}}$`, 'u');
export const ID_RULE = `${ID_LENGTH_CHARS.min}-${ID_LENGTH_CHARS.max} printable characters`;

export function isName(value: unknown): value is string {
  return typeof value === 'string' && NAME_PATTERN.test(value);
}

export function isId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value);
}

/**
 * Route pattern of a request no route matched: one per method, so clients cannot create unbounded
 * metric series or stats contexts. Braces keep it a valid stats context.
 */
export const UNMATCHED_ROUTE = '{unmatched}';
