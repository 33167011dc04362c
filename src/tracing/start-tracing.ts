import { NodeTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-node';
import { describeTracing, traceDestination, traceResource } from './trace-setup';
import { useTracer } from './tracing';
import { TracingSettings } from './tracing.settings';

/**
 * The OpenTelemetry SDK and its exporters, apart from src/tracing/tracing.ts: only an app that starts
 * tracing (the standalone service's bootstrap) loads them; the library's features use tracing.ts alone.
 */
export interface Tracing {
  /** The boot line: where traces go, or that they are off and how to turn them on. */
  describe: string;
  shutdown(): Promise<void>;
}

/**
 * Starts tracing when configured: OTEL_TRACES_EXPORTER (otlp, console, none), the OTLP endpoint, or
 * an exporter the caller passes (the tests' in-memory one); one traced app per process. The sampler is
 * the SDK's own reading of OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (default parentbased_always_on).
 */
export function startTracing(settings: TracingSettings, exporter?: SpanExporter): Tracing {
  const destination = traceDestination(settings, exporter);
  const describe = describeTracing(settings, destination);
  if (!destination) return { describe, shutdown: () => Promise.resolve() };
  const provider = new NodeTracerProvider({
    resource: traceResource(settings),
    spanProcessors: [destination.processor],
  });
  // The context manager (AsyncLocalStorage) and the W3C propagator; the provider's own tracer is used,
  // not the global one, so a second registration in a process (tests) changes nothing already running.
  provider.register();
  const stop = useTracer(provider.getTracer('trendboard'), settings.TRACE_BACKGROUND_JOBS === 'true');
  return {
    describe,
    shutdown: async () => {
      stop();
      await provider.shutdown();
    },
  };
}
