/**
 * Every answer: a browser never sniffs a JSON (or text) body into script or HTML, and never shows an
 * answer in a frame (clickjacking). Two static headers, set without building anything per request. In
 * a file of its own: the library sets them on its mounted routes without loading helmet (the service's).
 */
export const API_SECURITY_HEADERS = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' } as const;
