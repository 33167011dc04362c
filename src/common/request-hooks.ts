import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** An onRequest or onResponse hook in Fastify's callback form. */
export type RequestHook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

/** The phases whose hooks are joined: every request runs each, so each Fastify hook costs every request a turn of its runner. */
type Phase = 'onRequest' | 'onResponse';
const PHASES: readonly Phase[] = ['onRequest', 'onResponse'];

/** The joined hooks of each server that joinRequestHooks was called on, by phase. */
const joined = new WeakMap<FastifyInstance, Record<Phase, RequestHook[]>>();

/**
 * From here on, the app's own onRequest hooks (addRequestHook) run as one Fastify hook, and its
 * onResponse hooks (addResponseHook) as another (none on a server whose log controller is a
 * CompletingLogController: they run in it), each in the order they are added, after the hooks
 * of that phase the server already has, which join it too (Nest's adapter adds four onRequest hooks
 * that let every request through, tracing one, and an onResponse hook that does nothing unless given
 * one): each Fastify hook costs every request a turn of its hook runner, and a plain increment passed
 * six onRequest hooks and two onResponse hooks.
 */
export function joinRequestHooks(fastify: FastifyInstance): void {
  const completing = completingHooks(fastify);
  const hooks: Record<Phase, RequestHook[]> = { onRequest: [], onResponse: completing ?? [] };
  joined.set(fastify, hooks);
  // Fastify stores a hook once the plugins before it loaded (addHook defers to `after`): so are they taken.
  // Fastify's typings declare only the one-argument form of `after`; avvio takes this one too.
  const listener: AfterListener = (error, done) => {
    if (!error) for (const phase of PHASES) hooks[phase].unshift(...takeHooks(fastify, phase));
    done(error);
  };
  Reflect.apply(fastify.after, fastify, [listener]);
  fastify.addHook('onRequest', (request, reply, done) => runHooks(hooks.onRequest, request, reply, done, true));
  if (!completing)
    fastify.addHook('onResponse', (request, reply, done) => runHooks(hooks.onResponse, request, reply, done, false));
}

/**
 * The onResponse hooks of the server's log controller when it runs them itself (a
 * CompletingLogController, src/edge/completing-log-controller.ts, which this file does not load: the
 * library loads this file, and a host app on Express has no Fastify to load); else undefined.
 */
function completingHooks(fastify: FastifyInstance): RequestHook[] | undefined {
  const held = (fastifyStore(fastify, FASTIFY_LOG_CONTROLLER) as { responseHooks?: unknown } | undefined)
    ?.responseHooks;
  return Array.isArray(held) ? (held as RequestHook[]) : undefined;
}

/** Runs onResponse hooks as joinRequestHooks' Fastify hook does, then `done` (a log controller's). */
export function runResponseHooks(
  hooks: readonly RequestHook[],
  request: FastifyRequest,
  reply: FastifyReply,
  done: HooksDone,
): void {
  runHooks(hooks, request, reply, done, false);
}

/** Fastify's own store of an instance's log controller (its `kLogController` symbol): it has no getter. */
const FASTIFY_LOG_CONTROLLER = 'fastify.logController';

/** Fastify's `after` listener in its two-argument form, which passes a boot error on (the one-argument form drops it). */
type AfterListener = (error: Error | null, done: (error?: Error | null) => void) => void;

/** Fastify's own store of an instance's hooks (its `kHooks` symbol): it has no API to take one back. */
const FASTIFY_HOOKS = 'fastify.hooks';

/**
 * The server's hooks of `phase`, taken out of Fastify's store (bound to the server, as Fastify calls
 * them) when each is in callback form, which the runners below run as Fastify does; else none, and
 * they stay Fastify's, ahead of the joined ones as before.
 */
function takeHooks(fastify: FastifyInstance, phase: Phase): RequestHook[] {
  const store = fastifyStore(fastify, FASTIFY_HOOKS) as Partial<Record<Phase, unknown>> | undefined;
  const registered = store?.[phase];
  if (!Array.isArray(registered) || !registered.every((hook) => typeof hook === 'function' && hook.length === 3))
    return [];
  const taken = (registered as RequestHook[]).map((hook) => hook.bind(fastify) as RequestHook);
  registered.length = 0;
  return taken;
}

/** What Fastify holds on the instance under its symbol described `description`, if any. */
function fastifyStore(fastify: FastifyInstance, description: string): unknown {
  const symbol = Object.getOwnPropertySymbols(fastify).find((key) => key.description === description);
  return symbol && Reflect.get(fastify, symbol);
}

/** Adds an onRequest hook: to the joined ones when the server has them, else as a Fastify hook of its own. */
export function addRequestHook(fastify: FastifyInstance, hook: RequestHook): void {
  const hooks = joined.get(fastify);
  if (hooks) hooks.onRequest.push(hook);
  else fastify.addHook('onRequest', hook);
}

/** Adds an onResponse hook: to the joined ones when the server has them, else as a Fastify hook of its own. */
export function addResponseHook(fastify: FastifyInstance, hook: RequestHook): void {
  const hooks = joined.get(fastify);
  if (hooks) hooks.onResponse.push(hook);
  else fastify.addHook('onResponse', hook);
}

/**
 * Runs the hooks as Fastify's own runner does: an error (passed or thrown) ends the chain with that
 * error, and before the answer (`untilSent`) a hook that answered the request (without calling done)
 * ends it with nothing more run; onResponse hooks run after the answer, so there nothing ends it.
 */
function runHooks(
  hooks: readonly RequestHook[],
  request: FastifyRequest,
  reply: FastifyReply,
  done: HooksDone,
  untilSent: boolean,
): void {
  let next = 0;
  const step = (error?: Error | null): void => {
    if (error) return done(error, request, reply);
    if (next === hooks.length) return done(undefined, request, reply);
    if (untilSent && reply.sent) return;
    try {
      hooks[next++](request, reply, step);
    } catch (thrown) {
      done(thrown as Error, request, reply);
    }
  };
  step();
}

/** What runHooks calls once the hooks are done (or one failed): Fastify's `done`, which takes the error only, or one of its own. */
export type HooksDone = (error: Error | undefined, request: FastifyRequest, reply: FastifyReply) => void;
