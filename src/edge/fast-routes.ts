import { CanActivate, ForbiddenException, Injectable, Type } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HEADERS_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
  REDIRECT_METADATA,
  RESPONSE_PASSTHROUGH_METADATA,
  ROUTE_ARGS_METADATA,
  SSE_METADATA,
} from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModuleRef } from '@nestjs/core';
import { FORBIDDEN_MESSAGE } from '@nestjs/core/guards/constants';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { isObservable, lastValueFrom, Observable } from 'rxjs';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify';
import { compiledCheckOf, CompiledCheck } from '../common/compiled-checks';
import { AppErrorFilter } from './error.filter';
import { RouteConfigFields } from './route-decorators';

/** The route config key (Fastify's `config`, set through Nest's RouteConfig) that marks a fast route. */
const FAST_ROUTE = 'fastRoute';

interface FastRouteTarget {
  controller: Type;
  method: string;
}

/**
 * A hot route's valid requests skip Nest's per-request machinery (see FastRoutes): an increment or a
 * top read costs Nest's router 5-8 µs of CPU, a fifth of a top read (docs/benchmarks.md).
 */
export function FastRoute(): MethodDecorator {
  return (target, key, descriptor) => {
    const route: FastRouteTarget = { controller: target.constructor as Type, method: String(key) };
    RouteConfigFields({ [FAST_ROUTE]: route })(target, key, descriptor);
  };
}

/** What one parameter of a fast route's handler is built from. */
type ArgumentSource = (request: FastifyRequest, reply: FastifyReply) => unknown;

/** Marks an input its compiled check did not accept: the request goes to Nest, whose pipe words the 400. */
const UNCHECKED = Symbol('unchecked');

/** The handler of one fast route, as Nest would call it: the controller, its method, its arguments, its status. */
interface FastPlan {
  target: FastRouteTarget;
  instance: Record<string, (...args: unknown[]) => unknown>;
  handler: (...args: unknown[]) => unknown;
  sources: ArgumentSource[];
  statusCode: number;
}

/** Nest's enhancer metadata a fast route cannot honour: declaring one on a fast route fails the boot. */
const UNSUPPORTED = [
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
  EXCEPTION_FILTERS_METADATA,
  HEADERS_METADATA,
  REDIRECT_METADATA,
  SSE_METADATA,
];

/**
 * Answers a marked route's valid requests the way Nest's router would, without its per-request
 * promises, execution contexts and pipe chains: each parameter is built by its DTO's compiled check
 * (what AppValidationPipe accepts without class-validator), the global guards run with the same
 * execution context (none built for a guard that admits the request from what it already checked), the status is the route's, the result is sent as Nest's adapter sends it, and an
 * error goes to the same AppErrorFilter. A request a compiled check does not accept (bad input, an
 * empty path parameter) is handed to Nest's own handler before anything ran, so every refusal keeps its
 * exact words. Routes opt in with @FastRoute(); one with its own guards, interceptors, pipes, filters,
 * headers or a parameter other than a whole @Param/@Query/@Body DTO with a compiled check, @Req or
 * @Res({ passthrough: true }) fails the boot. FAST_ROUTES=false leaves every route to Nest.
 */
@Injectable()
export class FastRoutes {
  private readonly routes: string[] = [];
  private answeredCount = 0;

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly errors: AppErrorFilter,
  ) {}

  /** "METHOD /path" of each route taken over. */
  get takenOver(): readonly string[] {
    return this.routes;
  }

  /** Requests answered here (not handed to Nest): how a test tells that the fast path ran. */
  get answered(): number {
    return this.answeredCount;
  }

  /** Before Nest registers its routes: an onRoute hook takes over the marked ones. */
  register(fastify: FastifyInstance, guards: CanActivate[]): void {
    fastify.addHook('onRoute', (route) => {
      const target = (route.config as Record<string, unknown> | undefined)?.[FAST_ROUTE] as FastRouteTarget | undefined;
      if (!target || route.method === 'HEAD') return;
      const plan = this.planOf(target, route);
      route.handler = this.fastHandler(plan, route.handler, guards);
      this.routes.push(`${String(route.method)} ${route.url}`);
    });
  }

  private planOf(target: FastRouteTarget, route: RouteOptions): FastPlan {
    const { controller, method } = target;
    const handler = (controller.prototype as Record<string, (...args: unknown[]) => unknown>)[method];
    const where = `${controller.name}.${method}`;
    for (const key of UNSUPPORTED)
      if (Reflect.getMetadata(key, handler) !== undefined || Reflect.getMetadata(key, controller) !== undefined)
        throw new Error(`${where} is a @FastRoute(): it cannot have ${key}`);
    const instance = this.moduleRef.get<Record<string, (...args: unknown[]) => unknown>>(controller, {
      strict: false,
    });
    return { target, instance, handler, sources: argumentSources(target, where), statusCode: statusOf(handler, route) };
  }

  private fastHandler(plan: FastPlan, nestHandler: RouteHandlerMethod, guards: CanActivate[]): RouteHandlerMethod {
    const answer = (args: unknown[], request: FastifyRequest, reply: FastifyReply) => {
      this.answeredCount++;
      return this.answer(plan, args, guards, request, reply);
    };
    // A function, not an arrow: Nest's handler is called with the Fastify instance as `this`, as Fastify calls it.
    return function (this: FastifyInstance, request, reply) {
      const args = argumentsOf(plan.sources, request, reply);
      return args === UNCHECKED ? nestHandler.call(this, request, reply) : answer(args, request, reply);
    };
  }

  /**
   * Sends the answer itself and gives Fastify nothing to wait on: while the guards admit at once, no
   * promise of its own (an async answer returning the reply, a thenable, cost each request a promise,
   * a thenable job and Fastify's wrapper around it).
   */
  private answer(
    plan: FastPlan,
    args: unknown[],
    guards: CanActivate[],
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    try {
      let i = 0;
      while (i < guards.length && admitsChecked(guards[i], request, plan)) i++;
      if (i < guards.length) {
        const context = new ExecutionContextHost([request, reply], plan.target.controller, plan.handler);
        for (; i < guards.length; i++) {
          const admitted = guards[i].canActivate(context);
          if (admitted !== true) return void this.answerAfterGuards(plan, args, guards.slice(i + 1), admitted, context);
        }
      }
      this.handle(plan, args, request, reply);
    } catch (error) {
      this.failed(error, request, reply);
    }
  }

  /** The rest of answer once a guard answered other than `true` (a promise, an observable, a refusal). */
  private async answerAfterGuards(
    plan: FastPlan,
    args: unknown[],
    guards: CanActivate[],
    admitted: boolean | Promise<boolean> | Observable<boolean>,
    context: ExecutionContextHost,
  ): Promise<void> {
    const [request, reply] = context.getArgs<[FastifyRequest, FastifyReply]>();
    try {
      if (!(await (isObservable(admitted) ? lastValueFrom(admitted) : admitted)))
        throw new ForbiddenException(FORBIDDEN_MESSAGE);
      for (const guard of guards) {
        const next = guard.canActivate(context);
        if (next !== true && !(await (isObservable(next) ? lastValueFrom(next) : next)))
          throw new ForbiddenException(FORBIDDEN_MESSAGE);
      }
      this.handle(plan, args, request, reply);
    } catch (error) {
      this.failed(error, request, reply);
    }
  }

  /** The handler's result sent (once settled) with the route's status; a failure to the error filter. */
  private handle(plan: FastPlan, args: unknown[], request: FastifyRequest, reply: FastifyReply): void {
    void reply.status(plan.statusCode);
    const result = plan.handler.apply(plan.instance, args);
    if (!isThenable(result)) return void reply.send(result);
    void result.then(
      (value) => {
        try {
          reply.send(value);
        } catch (error) {
          this.failed(error, request, reply);
        }
      },
      (error) => this.failed(error, request, reply),
    );
  }

  private failed(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
    this.errors.catch(error, new ExecutionContextHost([request, reply]));
  }
}

/**
 * A guard that can tell from the request alone that it admits it at once (AccessGuard, once the access
 * gate checked the request before its body was read): no execution context is built for it then.
 */
interface AdmitsChecked {
  admitsChecked(request: FastifyRequest, handler: object, owner: object): boolean;
}

function admitsChecked(guard: CanActivate, request: FastifyRequest, plan: FastPlan): boolean {
  const early = (guard as Partial<AdmitsChecked>).admitsChecked;
  return early !== undefined && early.call(guard, request, plan.handler, plan.target.controller);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}

function argumentsOf(
  sources: ArgumentSource[],
  request: FastifyRequest,
  reply: FastifyReply,
): unknown[] | typeof UNCHECKED {
  const args = new Array<unknown>(sources.length);
  for (let i = 0; i < sources.length; i++) {
    const value = sources[i](request, reply);
    if (value === UNCHECKED) return UNCHECKED;
    args[i] = value;
  }
  return args;
}

/** Nest's status for the route: @HttpCode's, else 201 for a POST and 200 for anything else. */
function statusOf(handler: object, route: RouteOptions): number {
  const declared = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
  return declared ?? (String(route.method) === 'POST' ? 201 : 200);
}

interface RouteArgument {
  index: number;
  data?: unknown;
  pipes?: unknown[];
}

function argumentSources({ controller, method }: FastRouteTarget, where: string): ArgumentSource[] {
  const declared = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<
    string,
    RouteArgument
  >;
  const types = (Reflect.getMetadata('design:paramtypes', controller.prototype, method) ?? []) as unknown[];
  const passthrough = Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, controller, method) === true;
  const byIndex = new Map<number, ArgumentSource>();
  for (const [key, argument] of Object.entries(declared)) {
    const kind = Number(key.split(':')[0]);
    if (argument.data !== undefined || (argument.pipes ?? []).length > 0)
      throw new Error(`${where} is a @FastRoute(): its parameters take whole values, with no pipes of their own`);
    byIndex.set(argument.index, sourceOf(kind, types[argument.index], passthrough, where));
  }
  const undecorated = () => new Error(`${where} is a @FastRoute(): every parameter needs a decorator`);
  if (byIndex.size !== types.length) throw undecorated();
  return types.map((_type, index) => byIndex.get(index) ?? throwError(undecorated()));
}

function throwError(error: Error): never {
  throw error;
}

function sourceOf(kind: number, type: unknown, passthrough: boolean, where: string): ArgumentSource {
  if (kind === Number(RouteParamtypes.REQUEST)) return (request) => request;
  if (kind === Number(RouteParamtypes.RESPONSE) && passthrough) return (_request, reply) => reply;
  const check = compiledCheckOf(type);
  if (!check) throw new Error(`${where} is a @FastRoute(): each @Param/@Query/@Body needs a compiled check`);
  if (kind === Number(RouteParamtypes.PARAM)) return (request) => checked(check, request.params);
  if (kind === Number(RouteParamtypes.QUERY)) return (request) => checked(check, request.query);
  if (kind === Number(RouteParamtypes.BODY)) return (request) => checked(check, request.body);
  throw new Error(`${where} is a @FastRoute(): parameter kind ${RouteParamtypes[kind]} is not supported`);
}

function checked(check: CompiledCheck, value: unknown): unknown {
  return check(value) ?? UNCHECKED;
}
