/** Names that end up inside Redis key names: never braces (they would break the hash tag), never spaces. */
export const NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
export const NAME_RULE = '1-64 characters of A-Z a-z 0-9 _ . : -';

/** Item and user ids are members and fields, never key names: any printable characters, 1-128. */
// eslint-disable-next-line no-control-regex -- the rule is precisely "no control characters"
export const ID_PATTERN = /^[^\x00-\x1f\x7f]{1,128}$/u;
export const ID_RULE = '1-128 printable characters';

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
