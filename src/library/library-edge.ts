import { ArgumentMetadata, ArgumentsHost, Catch, Injectable, OnModuleInit, PipeTransform, Type } from '@nestjs/common';
import { BaseExceptionFilter, HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AccessGate } from '../access/access-gate';
import { parseConfiguredKeys } from '../access/access-rules';
import { AccessSettings } from '../access/access.settings';
import { Clock } from '../common/clock';
import { routeConfigOf } from '../common/route-config';
import { AppErrorFilter } from '../edge/error.filter';
import { boundedJsonParser, requireJsonWrites } from '../edge/json-body';
import { setApiSecurityHeaders } from '../edge/api-security-headers';
import { AppValidationPipe } from '../edge/validation';
import { LIBRARY_MESSAGES as M } from './library.messages';

/**
 * A route the library mounted: every one that needs a credential carries its access rule in its
 * Fastify config (Access puts it there); the app's own routes carry none.
 */
export function isLibraryRoute(request: FastifyRequest | undefined): boolean {
  return request !== undefined && routeConfigOf(request)?.access !== undefined;
}

/** Throws at boot when the /admin routes would be mounted with nothing to check their callers. */
export function requireAdminGuard(settings: AccessSettings): AccessSettings {
  if (settings.ADMIN_TOKEN) return settings;
  if (parseConfiguredKeys(settings.API_KEYS).some((key) => key.grant.scopes.has('admin'))) return settings;
  throw new Error(M.adminUnguarded());
}

/**
 * The service's edge around the library's routes, inside an app whose other routes keep their own
 * rules: the access check before the body is read, JSON-only writes (415), bounded JSON bodies (413,
 * 400 before parsing), the API's security headers. Request logging stays the app's (its logger, its
 * format): the library adds no second log line per request. Added before Fastify builds its routes (Nest calls onModuleInit before the
 * app listens), so the hooks and the parser reach every route.
 */
@Injectable()
export class LibraryEdge implements OnModuleInit {
  constructor(
    private readonly adapter: HttpAdapterHost,
    private readonly gate: AccessGate,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapter.httpAdapter?.getInstance<FastifyInstance>();
    // Without Fastify's hooks the routes would be mounted unguarded: refuse instead.
    if (!fastify || typeof fastify.addContentTypeParser !== 'function') throw new Error(M.fastifyOnly());
    requireJsonWrites(fastify, isLibraryRoute);
    // The service's answers never sniffed nor framed; the app's own routes keep the headers it chose.
    fastify.addHook('onRequest', (request, reply, done) => {
      if (isLibraryRoute(request)) setApiSecurityHeaders(reply);
      done();
    });
    this.gate.register(fastify);
    // The app's JSON parser (Nest's, or Fastify's own) is kept for its own routes.
    const bounded = boundedJsonParser(fastify);
    const plain = fastify.getDefaultJsonParser('error', 'error');
    fastify.removeContentTypeParser('application/json');
    fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
      isLibraryRoute(request) ? bounded(request, body, done) : plain(request, String(body), done),
    );
  }
}

/** The service's validation pipe for the library's DTOs only: the app's own parameters pass untouched. */
@Injectable()
export class LibraryValidationPipe implements PipeTransform {
  private readonly pipe = new AppValidationPipe();

  constructor(private readonly dtos: ReadonlySet<Type>) {}

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    return metadata.metatype && this.dtos.has(metadata.metatype) ? this.pipe.transform(value, metadata) : value;
  }
}

/** The service's error answers (a `code`, 4xx for bad input) on the library's routes; Nest's elsewhere. */
@Catch()
export class LibraryErrorFilter extends BaseExceptionFilter {
  private readonly own: AppErrorFilter;

  constructor(clock: Clock) {
    super();
    this.own = new AppErrorFilter(clock);
  }

  override catch(exception: unknown, host: ArgumentsHost): void {
    if (isLibraryRoute(host.switchToHttp().getRequest<FastifyRequest>())) return this.own.catch(exception, host);
    return super.catch(exception, host);
  }
}

const PRIMITIVES = new Set<unknown>([String, Number, Boolean, Object, Array]);

/** The DTO classes the handlers of `controllers` take (the LibraryValidationPipe's scope). */
export function dtoClassesOf(controllers: Type[]): Set<Type> {
  const dtos = new Set<Type>();
  for (const controller of controllers) {
    const prototype = controller.prototype as object;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const types = Reflect.getMetadata('design:paramtypes', prototype, name) as Type[] | undefined;
      for (const type of types ?? []) if (typeof type === 'function' && !PRIMITIVES.has(type)) dtos.add(type);
    }
  }
  return dtos;
}
