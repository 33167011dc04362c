import { IsIn, ValidateBy } from 'class-validator';
import { IntSetting as Bounded, validateSettings } from '../common/settings';
import { isAllowedHostsSetting } from './ingest-hosts';
import {
  INGEST_BATCH_MESSAGES,
  INGEST_IN_FLIGHT,
  INGEST_LEASE_MS,
  INGEST_REFRESH_MS,
  INGEST_RETRY_MS,
  INGEST_WAIT_MS,
} from './ingest.limits';

const IntSetting = (bounds: { min: number; max: number }) => Bounded(bounds.min, bounds.max);

/**
 * INGEST_* settings, validated at boot like AppConfig (kept in the ingest module: config.ts is full).
 * See docs/ingest.md.
 */
export class IngestSettings {
  /** 'false': this instance consumes no source (the admin routes still declare them for others). */
  @IsIn(['true', 'false'])
  INGEST_ENABLED = 'true';

  @IntSetting(INGEST_BATCH_MESSAGES)
  INGEST_BATCH = INGEST_BATCH_MESSAGES.default;

  @IntSetting(INGEST_IN_FLIGHT)
  INGEST_MAX_IN_FLIGHT = INGEST_IN_FLIGHT.default;

  @IntSetting(INGEST_REFRESH_MS)
  INGEST_REFRESH_MS = INGEST_REFRESH_MS.default;

  @IntSetting(INGEST_LEASE_MS)
  INGEST_LEASE_MS = INGEST_LEASE_MS.default;

  @IntSetting(INGEST_WAIT_MS)
  INGEST_WAIT_MS = INGEST_WAIT_MS.default;

  @IntSetting(INGEST_RETRY_MS)
  INGEST_RETRY_MS = INGEST_RETRY_MS.default;

  /**
   * Hosts a declared source may connect to besides loopback, the service's own Redis and the
   * configured sources' hosts (see IngestHosts): comma-separated `host`, `host:port`, `[v6]:port`, or `*`.
   */
  @ValidateBy({
    name: 'allowedHosts',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && isAllowedHostsSetting(value),
      defaultMessage: () =>
        'INGEST_ALLOWED_HOSTS must be comma-separated host, host:port, [v6] or [v6]:port entries, or *',
    },
  })
  INGEST_ALLOWED_HOSTS = '';

  get enabled(): boolean {
    return this.INGEST_ENABLED === 'true';
  }
}

/** Validates the INGEST_* variables; throws one error naming every bad one (the process stops at boot). */
export function validateIngestSettings(env: Record<string, unknown>): IngestSettings {
  return validateSettings(IngestSettings, env);
}
