import type { FastifyInstance, FastifyRequest } from 'fastify';
import { routeConfigOf } from '../common/route-config';
import { addRequestHook } from '../common/request-hooks';

/**
 * Limits every JSON body meets before anything walks it. The deepest legitimate body is
 * `{"items":[{...}]}` (3 levels); the widest object a DTO has holds a handful of keys.
 */
export const JSON_LIMITS = {
  maxDepth: 8,
  maxKeysPerObject: 32,
  /** The longest array a DTO takes is a batch's 1 000 entries. */
  maxElementsPerArray: 1000,
  /**
   * Values (array elements and object members, at every depth) in one body: a full batch of 1 000
   * entries of a handful of fields each fits. Bounds what class-transformer and class-validator build
   * before a DTO's own checks run.
   */
  maxValuesPerBody: 10_000,
  /** The batch route: 1000 entries with 128-character ids, every character \u-escaped, fit. */
  maxBatchBytes: 1024 * 1024,
  /** Every other route's bodies are a few fields. */
  maxBodyBytes: 64 * 1024,
} as const;

/** Routes whose bodies may be as large as a batch (a lookup's 1 000 ids). */
const LARGE_BODY_ROUTES = new Set(['/boards/:board/increments', '/boards/:board/lookup']);

/** The bounds jsonShapeProblem checks (JSON_LIMITS by default). */
export type JsonShapeLimits = Record<
  'maxDepth' | 'maxKeysPerObject' | 'maxElementsPerArray' | 'maxValuesPerBody',
  number
>;

/**
 * What is wrong with a JSON text's shape (nesting deeper than `maxDepth`, an object with more than
 * `maxKeysPerObject` keys, an array with more than `maxElementsPerArray` elements, more than
 * `maxValuesPerBody` values in all), or undefined. One pass over the characters, no recursion, so its
 * cost is linear whatever the text holds; the syntax itself is left to JSON.parse.
 */
export function jsonShapeProblem(text: string, limits: JsonShapeLimits = JSON_LIMITS): string | undefined {
  // countAt[d] counts the members (object) or elements (array) of the container open at depth d + 1;
  // isArrayAt[d] says which. An element is counted at its first character after `[` or `,`. The
  // function never yields, so every call can use the same arrays (nothing allocated per body).
  const { countAt, isArrayAt } = depthArrays(limits.maxDepth);
  let depth = 0;
  let values = 0;
  let awaitingElement = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    if (awaitingElement && c !== 0x5d) {
      awaitingElement = false;
      if (++countAt[depth - 1] > limits.maxElementsPerArray)
        return `body has an array with more than ${limits.maxElementsPerArray} elements`;
      if (++values > limits.maxValuesPerBody) return `body holds more than ${limits.maxValuesPerBody} values`;
    }
    if (c === 0x22) i = closingQuoteOf(text, i);
    else if (c === 0x7b || c === 0x5b) {
      if (depth === limits.maxDepth) return `body is nested deeper than ${limits.maxDepth} levels`;
      countAt[depth] = 0;
      isArrayAt[depth] = c === 0x5b ? 1 : 0;
      depth++;
      awaitingElement = c === 0x5b;
    } else if (c === 0x7d || c === 0x5d) {
      awaitingElement = false;
      if (depth > 0) depth--;
    } else if (c === 0x2c) awaitingElement = depth > 0 && isArrayAt[depth - 1] === 1;
    else if (c === 0x3a && depth > 0 && isArrayAt[depth - 1] === 0) {
      if (++countAt[depth - 1] > limits.maxKeysPerObject)
        return `body has an object with more than ${limits.maxKeysPerObject} keys`;
      if (++values > limits.maxValuesPerBody) return `body holds more than ${limits.maxValuesPerBody} values`;
    }
  }
  return undefined;
}

/** jsonShapeProblem's arrays, one entry per level of nesting, kept between calls (the deepest limits asked). */
let depthScratch = { countAt: new Int32Array(JSON_LIMITS.maxDepth), isArrayAt: new Uint8Array(JSON_LIMITS.maxDepth) };

function depthArrays(maxDepth: number): { countAt: Int32Array; isArrayAt: Uint8Array } {
  if (depthScratch.countAt.length < maxDepth)
    depthScratch = { countAt: new Int32Array(maxDepth), isArrayAt: new Uint8Array(maxDepth) };
  return depthScratch;
}

/** The index of the quote that closes the string opened at `open` (the text's length when none does). */
function closingQuoteOf(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c)
      i++; // backslash: skip the escaped character
    else if (c === 0x22) return i;
  }
  return text.length;
}

/** The largest body a route accepts, bytes. */
export function bodyLimitOf(request: FastifyRequest): number {
  return LARGE_BODY_ROUTES.has(routeConfigOf(request)?.url ?? '')
    ? JSON_LIMITS.maxBatchBytes
    : JSON_LIMITS.maxBodyBytes;
}

/** An error Fastify answers with its status (the error filter gives it its code). */
function httpError(statusCode: number, message: string): Error & { statusCode: number } {
  return Object.assign(new Error(message), { statusCode });
}

/** A content-type parser of JSON bodies, as Fastify calls it with `parseAs: 'string'`. */
export type JsonBodyParser = (
  request: FastifyRequest,
  body: string | Buffer,
  done: (error: Error | null, value?: unknown) => void,
) => void;

/**
 * Parses JSON refusing, before parsing, a body over its route's size and a body too deep or too wide;
 * the rest is Fastify's own JSON parser (prototype poisoning refused). An empty body is no body.
 */
export function boundedJsonParser(fastify: FastifyInstance): JsonBodyParser {
  const parse = fastify.getDefaultJsonParser('error', 'error');
  return (request, body, done) => {
    const text = String(body);
    // A write without a body that says it is JSON (a like, an increment by 1) has no body to parse.
    if (text.trim() === '') return done(null, undefined);
    const limit = bodyLimitOf(request);
    if (Buffer.byteLength(text) > limit) return done(httpError(413, `body is larger than ${limit} bytes`), undefined);
    const problem = jsonShapeProblem(text);
    if (problem) return done(httpError(400, problem), undefined);
    return parse(request, text, done);
  };
}

/** Makes JSON the only body type (any other content type is a 415), parsed by boundedJsonParser. */
export function guardJsonBodies(fastify: FastifyInstance): void {
  const parse = boundedJsonParser(fastify);
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, parse);
}

/** A JSON content type: any case, parameters (`; charset=utf-8`) allowed. */
const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** Methods whose requests may carry a body a browser form could send too. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Refuses (415) a write to a route of the app that does not declare `Content-Type: application/json`,
 * with a body or without. A browser sends a cross-origin form or a `no-cors` fetch (POST with no
 * type, text/plain, a form type) without asking first; JSON needs a CORS preflight the service never
 * grants, so a page of another origin cannot make a visitor's browser write. Runs before the body is read.
 * `appliesTo`: only the routes it accepts (the library's, inside an app whose other routes are its own).
 */
export function requireJsonWrites(fastify: FastifyInstance, appliesTo?: (request: FastifyRequest) => boolean): void {
  addRequestHook(fastify, (request, _reply, done) => {
    // is404: no route of the app (routeOptions.url would build Fastify's whole route view to say so).
    if (!BODY_METHODS.has(request.method) || request.is404) return done();
    if (appliesTo && !appliesTo(request)) return done();
    const type = request.headers['content-type'];
    // The type most writes send, compared before the pattern that also takes parameters and other cases.
    if (type === 'application/json' || (typeof type === 'string' && JSON_TYPE.test(type))) return done();
    done(httpError(415, 'Writes must say what they send: send Content-Type: application/json (even with no body)'));
  });
}
