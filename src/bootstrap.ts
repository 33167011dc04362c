import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { AppModule } from './app.module';
import { CommonModuleOptions } from './common/common.module';
import { ApiKeyGuard, ApiKeys } from './common/api-keys';
import { AppConfig, trustProxyOf, validateConfig } from './common/config';
import { guardJsonBodies, JSON_LIMITS } from './common/json-body';
import { createRootLogger, echoRequestId, lazyChildLogger, PinoLoggerService, requestId } from './common/logging';
import { AppValidationPipe } from './common/validation';
import { RateLimitGuard } from './governance/rate-limit.guard';
import { prepareGracefulShutdown } from './shutdown';

/** Builds the whole app (used by main.ts and by the e2e tests), ready to listen. */
export async function createApp(options: CommonModuleOptions = {}): Promise<NestFastifyApplication> {
  const logger = createRootLogger();
  // Validated here too: the adapter needs TRUST_PROXY before the app (and CommonModule) exist.
  const config = validateConfig({ ...process.env, ...options.env });
  const adapter = new FastifyAdapter({
    trustProxy: trustProxyOf(config),
    routerOptions: { maxParamLength: 2048 },
    bodyLimit: JSON_LIMITS.maxBatchBytes,
    genReqId: requestId,
    loggerInstance: logger,
    childLoggerFactory: lazyChildLogger,
  });
  // Nest's own body parsers stay off: JSON is the one body type (guardJsonBodies), anything else is a 415.
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(options), adapter, {
    bufferLogs: true,
    bodyParser: false,
  });
  logger.level = app.get(AppConfig).LOG_LEVEL;
  app.useLogger(new PinoLoggerService(logger));
  echoRequestId(app.getHttpAdapter().getInstance());
  guardJsonBodies(app.getHttpAdapter().getInstance());
  prepareGracefulShutdown(app, app.getHttpAdapter().getInstance());
  app.useGlobalPipes(new AppValidationPipe());
  if (app.get(ApiKeys).configured) app.useGlobalGuards(app.get(ApiKeyGuard));
  const rateLimit = app.get(RateLimitGuard);
  if (rateLimit.enabled) app.useGlobalGuards(rateLimit);
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('trendboard')
      .setDescription('Rolling-window leaderboards over Redis: trending items, ranks, counters and stats.')
      .setVersion('0.1.0')
      .addBearerAuth()
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
  return app;
}
