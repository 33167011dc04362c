import { type CallOptions, type RouteCall, Transport } from './transport.js';
import type { AnswerOf, BodyOf, Method, Path, QueryOf } from './types.js';

export type Query<P extends Path, M extends Method> = QueryOf<P, M>;
export type Body<P extends Path, M extends Method> = BodyOf<P, M>;
export type Answer<P extends Path, M extends Method> = Promise<AnswerOf<P, M>>;

/** The routes' shared plumbing: a call of a route pattern with its path parameters. */
export abstract class Routes {
  constructor(protected readonly transport: Transport) {}

  protected send<T>(route: RouteCall, options?: CallOptions): Promise<T> {
    return this.transport.call<T>(route, options);
  }
}
