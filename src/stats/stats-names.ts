import { UNMATCHED_ROUTE } from '../common/names';
import { CONTEXT_LENGTH_CHARS } from './stats.limits';

/**
 * Stats context and type names (pure). A context may hold `/`, spaces and `{}` so that a route
 * pattern like `GET /boards/{board}/top` or `GET /boards/:board/top` fits; types are plain names.
 */
export const CONTEXT_PATTERN = new RegExp(
  `^[A-Za-z0-9_.:\\- /{}]{${CONTEXT_LENGTH_CHARS.min},${CONTEXT_LENGTH_CHARS.max}}$`,
);
export const CONTEXT_RULE = `${CONTEXT_LENGTH_CHARS.min}-${CONTEXT_LENGTH_CHARS.max} characters of A-Z a-z 0-9 _ . : - / space { }`;

export function isContext(value: unknown): value is string {
  return typeof value === 'string' && CONTEXT_PATTERN.test(value);
}

/**
 * Escapes a context for use inside a key's hash tag: `{`, `}`, `:` and `%` become `%XX`. `%` is not a
 * context character, so the escaping is one-to-one; with `:` escaped, the first `:` after the escaped
 * context separates it from the type (types may contain `:` themselves).
 */
export function escapeContext(context: string): string {
  return context.replace(/[{}:%]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** Separator of context and type in index members: a tab sorts below every name character. */
export const INDEX_SEPARATOR = '\t';

export function indexMember(context: string, type: string): string {
  return `${context}${INDEX_SEPARATOR}${type}`;
}

export function parseIndexMember(member: string): { context: string; type: string } {
  const at = member.lastIndexOf(INDEX_SEPARATOR);
  return { context: member.slice(0, at), type: member.slice(at + 1) };
}

/**
 * The access-time context of a route: `"<METHOD> <pattern>"`. Characters a context may not hold become
 * `_`, except the wildcard `*`, which becomes `{wildcard}` (e.g. `GET /docs/{wildcard}`).
 */
export function routeContext(method: string, pattern: string | undefined): string {
  const path =
    pattern === undefined || pattern === ''
      ? UNMATCHED_ROUTE
      : pattern.replace(/\*/g, '{wildcard}').replace(/[^A-Za-z0-9_.:\- /{}]/g, '_');
  const context = `${method.replace(/[^A-Za-z]/g, '_').toUpperCase()} ${path}`;
  return context.length > CONTEXT_LENGTH_CHARS.max ? context.slice(0, CONTEXT_LENGTH_CHARS.max) : context;
}
