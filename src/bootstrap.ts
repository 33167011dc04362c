import { NestFactory } from '@nestjs/core';
import { LogController } from 'fastify';
import type { DestinationStream } from 'pino';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { AppModule } from './app.module';
import { CommonModuleOptions } from './common/common.module';
import { AccessGate } from './access/access-gate';
import { AccessGuard } from './access/access.guard';
import { AppConfig, trustProxyOf, validateConfig } from './common/config';
import { corsFor } from './common/cors';
import { httpServerOptions } from './common/http-edge';
import { guardJsonBodies, JSON_LIMITS, requireJsonWrites } from './common/json-body';
import { answerWrongMethods } from './common/method-not-allowed';
import { openApiDocument } from './common/openapi';
import { createRootLogger, echoRequestId, lazyChildLogger, PinoLoggerService, requestId } from './common/logging';
import { securityHeaders } from './common/security-headers';
import { AppValidationPipe } from './common/validation';
import { RateLimitGuard } from './governance/rate-limit.guard';
import { prepareGracefulShutdown } from './shutdown';
import { startTracing, traceRequests } from './tracing/tracing';
import { TracingSettings } from './tracing/tracing.settings';
import { validateSettings } from './common/settings';

/** The HTML pages the app serves: they get a Content-Security-Policy, every other answer the API headers. */
const HTML_PAGES = ['/docs', '/dashboard'];

/** How the app is built: the common module's options, and where log lines go (default: stdout, fd 1). */
export interface AppOptions extends CommonModuleOptions {
  logDestination?: DestinationStream;
  /** Where spans go (tests: an in-memory exporter); without it, OTEL_EXPORTER_OTLP_ENDPOINT decides. */
  spanExporter?: SpanExporter;
}

/** Builds the whole app (used by main.ts and by the e2e tests), ready to listen. */
export async function createApp(options: AppOptions = {}): Promise<NestFastifyApplication> {
  const logger = createRootLogger(options.logDestination);
  // Validated here too: the adapter needs TRUST_PROXY and the timeouts before the app (and CommonModule) exist.
  const config = validateConfig({ ...process.env, ...options.env });
  const tracing = startTracing(
    validateSettings(TracingSettings, { ...process.env, ...options.env }),
    options.spanExporter,
  );
  const adapter = new FastifyAdapter({
    ...httpServerOptions(config),
    trustProxy: trustProxyOf(config),
    routerOptions: { maxParamLength: 2048 },
    bodyLimit: JSON_LIMITS.maxBatchBytes,
    genReqId: requestId,
    loggerInstance: logger,
    // RequestLog writes one line per request instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
  });
  // Nest's own body parsers stay off: JSON is the one body type (guardJsonBodies), anything else is a 415.
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(options), adapter, {
    bufferLogs: true,
    bodyParser: false,
  });
  logger.level = app.get(AppConfig).LOG_LEVEL;
  // First of the request hooks: the ones after it (access, headers) run inside the request's span.
  traceRequests(app.getHttpAdapter().getInstance());
  if (tracing)
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onClose', () => tracing.shutdown());
  app.useLogger(new PinoLoggerService(logger));
  // One connection over the cap is closed on arrival, before it costs more than a file descriptor.
  app.getHttpServer().maxConnections = config.HTTP_MAX_CONNECTIONS;
  await corsFor(app, config);
  await securityHeaders(app, HTML_PAGES);
  echoRequestId(app.getHttpAdapter().getInstance());
  answerWrongMethods(app.getHttpAdapter().getInstance());
  guardJsonBodies(app.getHttpAdapter().getInstance());
  // Both before the body is read: a write that is not JSON, then a missing or unknown key.
  requireJsonWrites(app.getHttpAdapter().getInstance());
  app.get(AccessGate).register(app.getHttpAdapter().getInstance());
  prepareGracefulShutdown(app, app.getHttpAdapter().getInstance());
  app.useGlobalPipes(new AppValidationPipe());
  app.useGlobalGuards(app.get(AccessGuard));
  const rateLimit = app.get(RateLimitGuard);
  if (rateLimit.enabled) app.useGlobalGuards(rateLimit);
  const document = openApiDocument(app, '0.1.0');
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    // No "valid" badge fetched from validator.swagger.io: the page's CSP allows images of this origin only.
    swaggerOptions: { validatorUrl: null },
  });
  return app;
}
