import { NestFactory } from '@nestjs/core';
import type { DestinationStream } from 'pino';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { CommonModuleOptions } from './common/common.module';
import { AccessGate } from './access/access-gate';
import { AccessGuard } from './access/access.guard';
import { AppConfig, validateConfig } from './common/config';
import { EdgeSettings, trustProxyOf, validateEdgeSettings } from './edge/edge.settings';
import { capConnectionsPerClient } from './edge/connections';
import { validateAccessSettings } from './access/access.settings';
import { validateLiveSettings } from './live/live.settings';
import { edgeAdapter, installEdge, serveOpenApi } from './edge/edge.setup';
import { createRootLogger, PinoLoggerService } from './edge/logging';
import { FastRoutes } from './edge/fast-routes';
import { RateLimitGuard } from './governance/rate-limit.guard';
import { prepareGracefulShutdown } from './shutdown';
import type { Tracing } from './tracing/start-tracing';
import { traceRequests } from './tracing/tracing';
import { exporterNameOf, TRACES_OFF, TracingSettings } from './tracing/tracing.settings';
import { validateSettings } from './common/settings';

/** How the app is built: the common module's options, and where log lines go (default: stdout, fd 1). */
export interface AppOptions extends CommonModuleOptions {
  logDestination?: DestinationStream;
  /** Where spans go (tests: an in-memory exporter); without it, OTEL_TRACES_EXPORTER and the OTLP endpoint decide. */
  spanExporter?: SpanExporter;
}

/**
 * Every module's settings, validated before anything is built (the modules validate theirs again as
 * the app is defined): one error naming every bad variable, whichever module reads it. The edge's and
 * tracing's are needed before the app exists (the adapter, the span exporter).
 */
function validateAtBoot(env: Record<string, unknown>): { edge: EdgeSettings; tracingSettings: TracingSettings } {
  const problems: string[] = [];
  const attempt = <T>(validate: () => T): T | undefined => {
    try {
      return validate();
    } catch (error) {
      problems.push(
        ...String((error as Error).message)
          .split('\n')
          .slice(1),
      );
      return undefined;
    }
  };
  attempt(() => validateConfig(env));
  attempt(() => validateAccessSettings(env));
  attempt(() => validateLiveSettings(env));
  const edge = attempt(() => validateEdgeSettings(env));
  const tracingSettings = attempt(() => validateSettings(TracingSettings, env));
  if (!edge || !tracingSettings || problems.length > 0)
    throw new Error(`Invalid configuration:\n${problems.join('\n')}`);
  return { edge, tracingSettings };
}

/**
 * startTracing, its module (the OpenTelemetry SDK and OTLP exporter, some 270 modules) loaded only when
 * spans go somewhere: an app with tracing off, the default and every test app but the tracing tests', loads
 * @opentelemetry/api alone.
 */
async function startTracingWhenOn(settings: TracingSettings, exporter?: SpanExporter): Promise<Tracing> {
  if (!exporter && exporterNameOf(settings) === 'none') return { describe: TRACES_OFF, shutdown: async () => {} };
  const { startTracing } = await import('./tracing/start-tracing');
  return startTracing(settings, exporter);
}

/** Builds the whole app (used by main.ts and by the e2e tests), ready to listen. */
export async function createApp(options: AppOptions = {}): Promise<NestFastifyApplication> {
  const logger = createRootLogger(options.logDestination);
  const { edge, tracingSettings } = validateAtBoot({ ...process.env, ...options.env });
  const tracing = await startTracingWhenOn(tracingSettings, options.spanExporter);
  // Nest's own body parsers stay off: JSON is the one body type (guardJsonBodies), anything else is a 415.
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(options), edgeAdapter(edge, logger), {
    bufferLogs: true,
    bodyParser: false,
  });
  logger.level = app.get(AppConfig).LOG_LEVEL;
  logger.info({ context: 'Tracing' }, tracing.describe);
  const fastify = app.getHttpAdapter().getInstance();
  // First of the request hooks: the ones after it (access, headers) run inside the request's span.
  const gate = app.get(AccessGate);
  traceRequests(fastify, { trustsTraceContext: (request) => gate.presentsValidCredential(request) });
  fastify.addHook('onClose', () => tracing.shutdown());
  app.useLogger(new PinoLoggerService(logger));
  await installEdge(app, edge);
  // After the edge's hooks, still before the body is read: a missing or unknown key is refused unparsed.
  gate.register(fastify);
  capConnectionsPerClient(app.getHttpServer(), {
    maxPerClient: edge.HTTP_CONNECTIONS_PER_CLIENT,
    clientOf: (address) => gate.clientOfAddress(address),
    trustProxy: trustProxyOf(edge),
  });
  prepareGracefulShutdown(app);
  const rateLimit = app.get(RateLimitGuard);
  const guards = rateLimit.enabled ? [app.get(AccessGuard), rateLimit] : [app.get(AccessGuard)];
  app.useGlobalGuards(...guards);
  // Before app.init() registers the routes: the hot ones are taken over as they are registered.
  if (edge.FAST_ROUTES) app.get(FastRoutes).register(fastify, guards);
  serveOpenApi(app, '0.1.0');
  return app;
}
