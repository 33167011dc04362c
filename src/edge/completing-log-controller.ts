import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { type HooksDone, type RequestHook, runResponseHooks } from '../common/request-hooks';

/**
 * Fastify's log controller (its `logController` option) whose requestCompleted, which Fastify calls
 * once a response has finished (or failed), after that request's onResponse hooks, first runs the
 * onResponse hooks joinRequestHooks joins on its server: those are then no Fastify hook, and no answer
 * pays a turn of Fastify's onResponse hook runner (its closures and calls) for them. An error of one
 * ends them and is what Fastify's own completion line gets, as when they were Fastify's hook.
 */
export class CompletingLogController extends LogController {
  /** The server's joined onResponse hooks, in order (joinRequestHooks fills it). */
  readonly responseHooks: RequestHook[] = [];
  /** What runs after them: made once, not a closure per answer. */
  private readonly completed: HooksDone = (error, request, reply) => super.requestCompleted(error, request, reply);

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.responseHooks.length === 0) return super.requestCompleted(error, request, reply);
    runResponseHooks(this.responseHooks, request, reply, this.completed);
  }
}
