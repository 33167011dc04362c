import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  defaultResource,
  detectResources,
  envDetector,
  Resource,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { ConsoleTreeExporter } from './console-tree-exporter';
import { exporterNameOf, TRACES_OFF, TracingSettings } from './tracing.settings';

const DEFAULT_SERVICE_NAME = 'trendboard';
const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

/** Where spans go, and the words the boot line says it with. */
export interface TraceDestination {
  processor: SpanProcessor;
  says: string;
}

/** The span processor for the settings (a test's exporter wins), or undefined when tracing is off. */
export function traceDestination(settings: TracingSettings, exporter?: SpanExporter): TraceDestination | undefined {
  if (exporter) return { processor: new SimpleSpanProcessor(exporter), says: 'the exporter the app was given' };
  switch (exporterNameOf(settings)) {
    case 'none':
      return undefined;
    case 'console':
      return {
        processor: new SimpleSpanProcessor(new ConsoleTreeExporter()),
        says: 'standard output (OTEL_TRACES_EXPORTER=console: a tree per trace)',
      };
    case 'otlp': {
      const url = otlpTracesUrl(settings);
      return { processor: new BatchSpanProcessor(new OTLPTraceExporter({ url })), says: `OTLP/HTTP ${url}` };
    }
  }
}

/** The OTLP exporter's own rule: the traces URL as given, else `<endpoint>/v1/traces`. */
function otlpTracesUrl(settings: TracingSettings): string {
  if (settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const endpoint = settings.OTEL_EXPORTER_OTLP_ENDPOINT ?? DEFAULT_OTLP_ENDPOINT;
  return `${endpoint.replace(/\/$/, '')}/v1/traces`;
}

/**
 * The spans' resource: the SDK's defaults, `service.name` trendboard unless OTEL_SERVICE_NAME or
 * OTEL_RESOURCE_ATTRIBUTES say otherwise (read by the SDK's environment detector), the setting given
 * to the app last (tests pass theirs without touching the process environment).
 */
export function traceResource(settings: TracingSettings): Resource {
  const named = settings.OTEL_SERVICE_NAME ? { 'service.name': settings.OTEL_SERVICE_NAME } : {};
  return defaultResource()
    .merge(resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes(named));
}

/** The boot line's words for where traces go and what is sampled. */
export function describeTracing(settings: TracingSettings, destination: TraceDestination | undefined): string {
  if (!destination) return TRACES_OFF;
  const sampler = settings.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on';
  const ratio = settings.OTEL_TRACES_SAMPLER_ARG ? ` ${settings.OTEL_TRACES_SAMPLER_ARG}` : '';
  const background =
    settings.TRACE_BACKGROUND_JOBS === 'true' ? 'background jobs traced' : 'background jobs not traced';
  const service = traceResource(settings).attributes['service.name'];
  return `traces to ${destination.says}: service ${String(service)}, sampler ${sampler}${ratio}, ${background}`;
}
