/**
 * The OpenAPI document's security schemes (src/edge/openapi.ts declares them; the access rules'
 * decorators name them on each keyed route). A file of their own: the routes the library mounts
 * name them without loading the document's builder.
 */
export const BEARER_SCHEME = 'bearer';
export const API_KEY_SCHEME = 'apiKey';
