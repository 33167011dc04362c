import type { ScriptArg } from './scripts';

/**
 * The common header every function reads first (read_header in functions/args.lua): the config
 * version the caller built its keys from, the time, the expiry budget and the windows. Written here
 * once, so no builder counts ARGV positions.
 */
export interface CallHeader {
  /** Config version ("" for a function that checks none). */
  version: string;
  nowMs: number;
  /** Most expired-slot fields the call may drain. */
  budget: number;
  /** `originSec`: where the window's slots start (unix s; 0 for a rolling window: ranking's slotRule). */
  windows: ReadonlyArray<{ periodSec: number; intervalSec: number; createdAtMs: number; originSec: number }>;
}

/**
 * The header of a call on no window that checks no config version (a board's config, its drop):
 * only the time, which such a call keeps as its own clock (0: it reads none).
 */
export function bareHeader(nowMs: number): CallHeader {
  return { version: '', nowMs, budget: 0, windows: [] };
}

/**
 * A header window's fields in wire order: each by the name the reader reads it by (emitted into every
 * library as RECORD_FIELDS.header_window: functions/args.lua binds its windows by these names, never
 * by their places) and the CallHeader field it is written from.
 */
export const HEADER_WINDOW_FIELDS = {
  period_sec: 'periodSec',
  interval_sec: 'intervalSec',
  created_ms: 'createdAtMs',
  origin_sec: 'originSec',
} as const;

const WINDOW_WIRE = Object.values(HEADER_WINDOW_FIELDS);

/**
 * The header's arguments: version, now, budget, then the windows as records of HEADER_WINDOW_FIELDS
 * (their count W, then each window's fields in that order), the layout every board call's header has.
 */
export function headerArgs(header: CallHeader): ScriptArg[] {
  const args: ScriptArg[] = [header.version, header.nowMs, header.budget, header.windows.length];
  // Indexed: every call builds its header here (as recordArgs' rows).
  for (let w = 0; w < header.windows.length; w++) {
    const window = header.windows[w];
    for (let f = 0; f < WINDOW_WIRE.length; f++) args.push(window[WINDOW_WIRE[f]]);
  }
  return args;
}

/** One record of a record shape: a value per field name (undefined is sent as "": Lua sees an empty string). */
export type RecordOf<Fields extends readonly string[]> = { [F in Fields[number]]: ScriptArg | undefined };

/**
 * Records as read_records reads them: their count, then each row's values in the order of `fields`,
 * the same list the library emits into its Lua (RECORD_FIELDS), so both sides name fields, not positions.
 */
export function recordArgs<Fields extends readonly string[]>(
  fields: Fields,
  rows: ReadonlyArray<RecordOf<Fields>>,
): ScriptArg[] {
  const args: ScriptArg[] = [rows.length];
  // Indexed: every write builds its records here, and an unoptimised for-of allocates an iterator result per step.
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    for (let f = 0; f < fields.length; f++) args.push(row[fields[f] as Fields[number]] ?? '');
  }
  return args;
}

/** A named call's own arguments: a value per name of its contract (undefined is sent as ""). */
export type NamedArgs<Names extends readonly string[]> = { [N in Names[number]]: ScriptArg | undefined };

/**
 * A named call's arguments as reader.read_call reads them: the header, then one value per name of
 * `names` (the contract's `args`, emitted into the library as CALLS.<handler>.args), in that order.
 */
export function callArgs<Names extends readonly string[]>(
  header: CallHeader,
  names: Names,
  values: NamedArgs<Names>,
): ScriptArg[] {
  const args = headerArgs(header);
  for (const name of names) args.push(values[name as Names[number]] ?? '');
  return args;
}
