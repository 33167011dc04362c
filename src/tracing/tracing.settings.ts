import { IsIn, IsOptional, Matches } from 'class-validator';

export const TRACE_EXPORTERS = ['otlp', 'console', 'none'] as const;
export type TraceExporterName = (typeof TRACE_EXPORTERS)[number];
/** The OpenTelemetry SDK's sampler names (it reads OTEL_TRACES_SAMPLER itself; boot refuses a misspelling). */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/**
 * The tracing module's settings (the OpenTelemetry names), validated at boot with the app's by the
 * one settings helper (bootstrap): tracing sits below common, so it declares and never imports it.
 * The SDK reads the sampler and OTLP variables from the environment itself; they are named here so a
 * misspelt value stops the boot instead of being dropped with a diagnostic nobody sees.
 */
export class TracingSettings {
  /**
   * Where spans go: `otlp` (OTLP over HTTP), `console` (each request's span tree on standard output) or
   * `none`. Absent: `otlp` when an OTLP endpoint is set, else `none` (tracing off, at no cost).
   */
  @IsOptional()
  @IsIn(TRACE_EXPORTERS, { message: `OTEL_TRACES_EXPORTER must be one of ${TRACE_EXPORTERS.join(', ')}` })
  OTEL_TRACES_EXPORTER?: TraceExporterName;

  /** OTLP over HTTP: traces go to `<endpoint>/v1/traces` (default http://localhost:4318). */
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL' })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /** OTLP over HTTP, the traces' own URL as given (wins over OTEL_EXPORTER_OTLP_ENDPOINT). */
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http(s) URL' })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;

  /** The spans' `service.name` (default `trendboard`; OTEL_RESOURCE_ATTRIBUTES is read too). */
  @IsOptional()
  @Matches(/^\S+$/, { message: 'OTEL_SERVICE_NAME must be one word' })
  OTEL_SERVICE_NAME?: string;

  @IsOptional()
  @IsIn(TRACE_SAMPLERS, { message: `OTEL_TRACES_SAMPLER must be one of ${TRACE_SAMPLERS.join(', ')}` })
  OTEL_TRACES_SAMPLER?: string;

  /** The ratio of the traceidratio samplers, 0 to 1. */
  @IsOptional()
  @Matches(/^(0(\.\d+)?|1(\.0+)?)$/, { message: 'OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1' })
  OTEL_TRACES_SAMPLER_ARG?: string;

  /**
   * Whether Redis work outside any request (expiry sweeps, snapshots, ingest) is traced, each call a
   * root trace under the sampler. Off by default: an idle instance would send several traces a second.
   */
  @IsIn(['true', 'false'], { message: 'TRACE_BACKGROUND_JOBS must be true or false' })
  TRACE_BACKGROUND_JOBS: 'true' | 'false' = 'false';
}

/** OTEL_TRACES_EXPORTER, or what its absence means here: OTLP when an endpoint is set, else none. */
export function exporterNameOf(settings: TracingSettings): TraceExporterName {
  if (settings.OTEL_TRACES_EXPORTER) return settings.OTEL_TRACES_EXPORTER;
  const endpointSet = settings.OTEL_EXPORTER_OTLP_ENDPOINT || settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return endpointSet ? 'otlp' : 'none';
}

/** The boot line of an app that traces nothing. */
export const TRACES_OFF =
  'traces off (OTEL_TRACES_EXPORTER=console prints them; otlp sends them to OTEL_EXPORTER_OTLP_ENDPOINT)';
