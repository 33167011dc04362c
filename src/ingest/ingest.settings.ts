import { Transform } from 'class-transformer';
import { IsIn, IsInt, Max, Min, validateSync } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { applyDecorators } from '@nestjs/common';
import {
  INGEST_BATCH_MESSAGES,
  INGEST_IN_FLIGHT,
  INGEST_LEASE_MS,
  INGEST_REFRESH_MS,
  INGEST_WAIT_MS,
} from './ingest.limits';

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
const IntSetting = (bounds: { min: number; max: number }) =>
  applyDecorators(Transform(toInt), IsInt(), Min(bounds.min), Max(bounds.max));

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

  get enabled(): boolean {
    return this.INGEST_ENABLED === 'true';
  }
}

/** Validates the INGEST_* variables; throws one error naming every bad one (the process stops at boot). */
export function validateIngestSettings(env: Record<string, unknown>): IngestSettings {
  const known = new Set(Object.keys(new IngestSettings()));
  const present = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => known.has(k) && v !== undefined && v !== ''),
  );
  const settings = plainToInstance(IngestSettings, present, { exposeDefaultValues: true });
  const errors = validateSync(settings, { forbidUnknownValues: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return settings;
}
