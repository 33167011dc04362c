import type { FastifyInstance } from 'fastify';
import { noteErrorCode } from '../common/answered-requests';
import { COMMON_MESSAGES as M } from '../common/common.messages';
import { toErrorBody } from './error.filter';
import { DomainError } from '../common/errors';
import { addRequestHook } from '../common/request-hooks';

/** Methods a route may answer, in the order an `Allow` header lists them. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** The methods some route answers on `path` (a concrete path, no query); none for an unknown path. */
export function allowedMethods(fastify: FastifyInstance, path: string): string[] {
  return METHODS.filter((method) => {
    const route = fastify.findRoute({ method, url: path });
    // A catch-all (CORS preflight's OPTIONS *) answers every path: it says nothing about this one.
    return route !== null && !(route.params && '*' in route.params && method === 'OPTIONS');
  });
}

/**
 * A known path asked with a method it does not take is a 405 naming the ones it does (`Allow`), not
 * a 404 that reads as "no such path". Runs before the not-found handler (a 404 route in Fastify), so
 * only requests no route matched pay for the lookup.
 */
export function answerWrongMethods(fastify: FastifyInstance): void {
  addRequestHook(fastify, (request, reply, done) => {
    if (!request.is404) return done();
    const path = request.url.split('?', 1)[0];
    const allowed = allowedMethods(fastify, path);
    if (allowed.length === 0) return done();
    const body = toErrorBody(new DomainError('METHOD_NOT_ALLOWED', M.methodNotAllowed(request.method, allowed)));
    noteErrorCode(request, body.code);
    void reply.status(405).header('Allow', allowed.join(', ')).send(body);
  });
}
