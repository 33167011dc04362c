import { ID_LENGTH_CHARS, NAME_LENGTH_CHARS } from './limits';

/** Names that end up inside Redis key names: never braces (they would break the hash tag), never spaces. */
export const NAME_PATTERN = new RegExp(`^[A-Za-z0-9_.:-]{${NAME_LENGTH_CHARS.min},${NAME_LENGTH_CHARS.max}}$`);
export const NAME_RULE = `${NAME_LENGTH_CHARS.min}-${NAME_LENGTH_CHARS.max} characters of A-Z a-z 0-9 _ . : -`;

/**
 * Item and user ids are members and fields, never key names: printable characters, counted as code
 * points (hence `u`). Refused: control characters (C0, DEL, C1), format characters (zero-width
 * spaces and joiners, bidi controls, BOM), line and paragraph separators, unpaired surrogates (they
 * would be stored as U+FFFD, merging different ids) and ids of whitespace only: two ids that look
 * alike are then one id, or refused.
 */
export const ID_PATTERN = new RegExp(
  `^(?!\\s*$)[^\\p{Cc}\\p{Cf}\\p{Cs}\\p{Zl}\\p{Zp}]{${ID_LENGTH_CHARS.min},${ID_LENGTH_CHARS.max}}$`,
  'u',
);
export const ID_RULE = `${ID_LENGTH_CHARS.min}-${ID_LENGTH_CHARS.max} printable characters`;

const NOT_PRINTABLE_ASCII = /[^ -~]/;

/**
 * An id as stored: Unicode NFC, so `josé` sent precomposed or decomposed is one id (one row), as the
 * README promises of ids that look alike. Applied at the edge (DTOs, compiled checks, ingest messages)
 * before the id is checked; printable ASCII, most ids, is already NFC and skips the work.
 */
export function toNfc(id: string): string {
  return NOT_PRINTABLE_ASCII.test(id) ? id.normalize('NFC') : id;
}

/**
 * The key a block binds an actor by (see docs/security.md): NFKC (full-width and other compatibility
 * forms fold to their plain letters), case-folded (lower case after upper, so `ß`/`ẞ` and `Σ`/`σ`/`ς`
 * meet as far as JavaScript's case mapping does) and trimmed of white space. Stored ids stay NFC: only
 * the block matches by this key, so `Spammer`, `spammer ` and `ｓpammer` are refused with `spammer`.
 */
export function blockKeyOf(actor: string): string {
  return actor.normalize('NFKC').toUpperCase().toLowerCase().trim();
}

export function isName(value: unknown): value is string {
  return typeof value === 'string' && NAME_PATTERN.test(value);
}

/**
 * Route pattern of a request no route matched: one per method, so clients cannot create unbounded
 * metric series or stats contexts. Braces keep it a valid stats context.
 */
export const UNMATCHED_ROUTE = '{unmatched}';
