import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import type { Logger } from 'pino';
import { closingResponses, setCloserOfAll } from './connections';
import { corsFor } from './cors';
import { EdgeSettings, trustProxyOf } from './edge.settings';
import { httpServerOptions } from './http-edge';
import { guardJsonBodies, JSON_LIMITS, requireJsonWrites } from './json-body';
import { requestId, echoRequestId, withLazyChildren } from './logging';
import { answerWrongMethods } from './method-not-allowed';
import { openApiDocument } from './openapi';
import { joinRequestHooks } from '../common/request-hooks';
import { CompletingLogController } from './completing-log-controller';
import { securityHeaders } from './security-headers';
import { AppValidationPipe } from './validation';

/** The HTML pages the app serves: they get a Content-Security-Policy, every other answer the API headers. */
const HTML_PAGES = ['/docs', '/dashboard'];

/**
 * The Fastify adapter: server timeouts, TRUST_PROXY, the largest body, request ids, the root logger,
 * and `Connection: close` on refusals and once stopping (closingResponses; closerOfAll(adapter)).
 */
export function edgeAdapter(config: EdgeSettings, logger: Logger): FastifyAdapter {
  const responses = closingResponses();
  const adapter = new FastifyAdapter({
    ...httpServerOptions(config, responses.ServerResponse),
    trustProxy: trustProxyOf(config),
    routerOptions: { maxParamLength: 2048 },
    bodyLimit: JSON_LIMITS.maxBatchBytes,
    genReqId: requestId,
    loggerInstance: withLazyChildren(logger),
    // RequestLog writes one line per request instead of Fastify's two; the joined onResponse hooks run here.
    logController: new CompletingLogController({ disableRequestLogging: true }),
    // The app has no Nest middleware: without middie no request runs its hook.
    skipMiddie: true,
  });
  setCloserOfAll(adapter, responses.closeAll);
  return adapter;
}

/**
 * The edge's hooks, in the order they run for a request: CORS, security headers, the request id,
 * 405 for a known path's wrong method, the JSON body parser, and the JSON content type of writes
 * (before the body is read). The hooks after CORS are joined into one Fastify hook (joinRequestHooks),
 * as are those added after them (the access check, bootstrap.ts; answered requests, load shedding).
 */
export async function installEdge(app: NestFastifyApplication, config: EdgeSettings): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  // One connection over the cap is closed on arrival, before it costs more than a file descriptor.
  app.getHttpServer().maxConnections = config.HTTP_MAX_CONNECTIONS;
  await corsFor(app, config);
  joinRequestHooks(fastify);
  securityHeaders(fastify, HTML_PAGES);
  echoRequestId(fastify);
  answerWrongMethods(fastify);
  guardJsonBodies(fastify);
  requireJsonWrites(fastify);
  app.useGlobalPipes(new AppValidationPipe());
}

/**
 * The OpenAPI document at /docs-json and its page at /docs, built on the first request for either:
 * building it scans every route and DTO, which a boot need not pay (each e2e test file boots apps).
 */
export function serveOpenApi(app: NestFastifyApplication, version: string): void {
  SwaggerModule.setup('docs', app, () => openApiDocument(app, version), {
    jsonDocumentUrl: 'docs-json',
    // No "valid" badge fetched from validator.swagger.io: the page's CSP allows images of this origin only.
    swaggerOptions: { validatorUrl: null },
  });
}
