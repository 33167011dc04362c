import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Limits every JSON body meets before anything walks it. The deepest legitimate body is
 * `{"items":[{...}]}` (3 levels); the widest object a DTO has holds a handful of keys.
 */
export const JSON_LIMITS = {
  maxDepth: 8,
  maxKeysPerObject: 32,
  /** The batch route: 1000 entries with 128-character ids, every character \u-escaped, fit. */
  maxBatchBytes: 1024 * 1024,
  /** Every other route's bodies are a few fields. */
  maxBodyBytes: 64 * 1024,
} as const;

/** Routes whose bodies may be as large as a batch. */
const LARGE_BODY_ROUTES = new Set(['/boards/:board/increments']);

/**
 * What is wrong with a JSON text's shape (nesting deeper than `maxDepth`, an object with more than
 * `maxKeysPerObject` keys), or undefined. One pass over the characters, no recursion, so its cost is
 * linear whatever the text holds; the syntax itself is left to JSON.parse.
 */
export function jsonShapeProblem(
  text: string,
  limits: { maxDepth: number; maxKeysPerObject: number } = JSON_LIMITS,
): string | undefined {
  // keysAt[d] counts the keys of the object open at depth d (-1: an array is open there).
  const keysAt: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      keysAt.push(c === 0x7b ? 0 : -1);
      if (keysAt.length > limits.maxDepth) return `body is nested deeper than ${limits.maxDepth} levels`;
    } else if (c === 0x7d || c === 0x5d) keysAt.pop();
    else if (c === 0x3a && keysAt.length > 0 && keysAt[keysAt.length - 1] >= 0) {
      if (++keysAt[keysAt.length - 1] > limits.maxKeysPerObject)
        return `body has an object with more than ${limits.maxKeysPerObject} keys`;
    }
  }
  return undefined;
}

/** The largest body a route accepts, bytes. */
export function bodyLimitOf(request: FastifyRequest): number {
  return LARGE_BODY_ROUTES.has(request.routeOptions.url ?? '') ? JSON_LIMITS.maxBatchBytes : JSON_LIMITS.maxBodyBytes;
}

/** An error Fastify answers with its status (the error filter gives it its code). */
function httpError(statusCode: number, message: string): Error & { statusCode: number } {
  return Object.assign(new Error(message), { statusCode });
}

/**
 * Makes JSON the only body type (any other content type is a 415) and parses it with a parser that
 * refuses, before parsing, a body over its route's size and a body too deep or too wide; the rest is
 * Fastify's own JSON parser (prototype poisoning refused).
 */
export function guardJsonBodies(fastify: FastifyInstance): void {
  const parse = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    const limit = bodyLimitOf(request);
    if (Buffer.byteLength(text) > limit) return done(httpError(413, `body is larger than ${limit} bytes`), undefined);
    const problem = jsonShapeProblem(text);
    if (problem) return done(httpError(400, problem), undefined);
    return parse(request, text, done);
  });
}
