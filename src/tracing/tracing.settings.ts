import { IsOptional, Matches } from 'class-validator';

/**
 * The tracing module's settings (the OpenTelemetry names), validated at boot with the app's by the
 * one settings helper (bootstrap): tracing sits below common, so it declares and never imports it.
 */
export class TracingSettings {
  /** OTLP over HTTP: traces go to `<endpoint>/v1/traces`. Absent: tracing is off, at no cost. */
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL' })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
}
