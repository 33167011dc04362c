import { applyDecorators, DynamicModule, Provider, Type } from '@nestjs/common';
import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsInt, Max, Min, validateSync } from 'class-validator';

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
const toBool = ({ value }: { value: unknown }) =>
  value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;

/** An integer setting within [min, max]; the environment gives it as a string. */
export const IntSetting = (min: number, max: number) => applyDecorators(Transform(toInt), IsInt(), Min(min), Max(max));
export const BoolSetting = () => applyDecorators(Transform(toBool), IsBoolean());

/** A row of an integer settings table: the setting's bounds and its default. */
export interface IntSettingRow {
  readonly min: number;
  readonly max: number;
  readonly byDefault: number;
}
export type IntSettingsTable = Record<string, IntSettingRow>;

/**
 * The integer settings more than one settings class reads (each class validates only its own fields):
 * their bounds and default said once, documented where their owner declares them (AppConfig,
 * EdgeSettings).
 */
export const SHARED_INT_SETTINGS = {
  REDIS_MAX_PENDING_COMMANDS: { min: 16, max: 1_000_000, byDefault: 1024 },
  HTTP_MAX_CONNECTIONS: { min: 1, max: 1_000_000, byDefault: 10_000 },
  RATE_LIMIT_MAX_CLIENTS: { min: 1, max: 10_000_000, byDefault: 50_000 },
} as const satisfies IntSettingsTable;

/**
 * The base of a settings class whose integer settings are the rows of `table` (each documented in its
 * row): a field per row, its default the row's `byDefault`, validated within the row's bounds as
 * @IntSetting does. The class adds its other settings as decorated fields.
 */
export function IntSettings<Table extends IntSettingsTable>(table: Table): new () => { [K in keyof Table]: number } {
  class Ints {
    constructor() {
      for (const [name, row] of Object.entries(table)) Object.assign(this, { [name]: row.byDefault });
    }
  }
  for (const [name, row] of Object.entries(table)) IntSetting(row.min, row.max)(Ints.prototype, name);
  return Ints as new () => { [K in keyof Table]: number };
}

/**
 * A settings class filled from the environment and validated: only its own fields are read (each
 * feature's settings name just what it uses), defaults kept for what is absent or empty. Throws one
 * error listing every problem, naming each variable.
 */
export function validateSettings<T extends object>(Settings: new () => T, env: Record<string, unknown>): T {
  const known = new Set(Object.keys(new Settings()));
  const present = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => known.has(k) && v !== undefined && v !== ''),
  );
  const settings = plainToInstance(Settings, present, { exposeDefaultValues: true });
  const errors = validateSync(settings, { whitelist: false, forbidUnknownValues: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return settings;
}

/** A settings class whose fields are what its `read` answers of the validated configuration. */
export interface SettingsClass<Config, Fields> {
  new (fields: Fields): Readonly<Fields>;
  /** The settings, taken once from the configuration. */
  from(config: Config): Readonly<Fields>;
}

/**
 * The base of a module's settings class, declared once as what it reads of the configuration (each
 * field documented there): its providers name these fields, never the configuration's variables.
 */
export function settingsFrom<Config, Fields extends object>(
  read: (config: Config) => Fields,
): SettingsClass<Config, Fields> {
  return class {
    constructor(fields: Fields) {
      Object.assign(this, fields);
    }

    static from(config: Config) {
      return new this(read(config));
    }
  } as SettingsClass<Config, Fields>;
}

/**
 * A feature module's forRoot: its settings validated from `env` at once (a bad value throws here,
 * before anything connects) and provided under their class, with `providers` made from the same
 * environment; the module's other parts are its @Module metadata.
 */
export function moduleWithSettings<T extends object>(
  module: Type,
  Settings: new () => T,
  env: Record<string, unknown>,
  providers: Provider[] = [],
): DynamicModule {
  return { module, providers: [{ provide: Settings, useValue: validateSettings(Settings, env) }, ...providers] };
}
