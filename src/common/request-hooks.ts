import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** An onRequest hook in Fastify's callback form. */
export type RequestHook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

/** The joined hooks of each server that joinRequestHooks was called on. */
const joined = new WeakMap<FastifyInstance, RequestHook[]>();

/**
 * From here on, the app's own onRequest hooks (addRequestHook) run as one Fastify hook, in the order
 * they are added, at the place of this call: each Fastify hook costs every request a turn of its hook
 * runner, and a plain increment passes seven of the app's hooks that let it through.
 */
export function joinRequestHooks(fastify: FastifyInstance): void {
  const hooks: RequestHook[] = [];
  joined.set(fastify, hooks);
  fastify.addHook('onRequest', (request, reply, done) => runHooks(hooks, request, reply, done));
}

/** Adds an onRequest hook: to the joined ones when the server has them, else as a Fastify hook of its own. */
export function addRequestHook(fastify: FastifyInstance, hook: RequestHook): void {
  const hooks = joined.get(fastify);
  if (hooks) hooks.push(hook);
  else fastify.addHook('onRequest', hook);
}

/**
 * Runs the hooks as Fastify's own runner does: an error (passed or thrown) ends the chain with that
 * error, and a hook that answered the request (without calling done) ends it with nothing more run.
 */
function runHooks(
  hooks: readonly RequestHook[],
  request: FastifyRequest,
  reply: FastifyReply,
  done: (error?: Error) => void,
): void {
  let next = 0;
  const step = (error?: Error | null): void => {
    if (error) return done(error);
    if (next === hooks.length) return done();
    if (reply.sent) return;
    try {
      hooks[next++](request, reply, step);
    } catch (thrown) {
      done(thrown as Error);
    }
  };
  step();
}
