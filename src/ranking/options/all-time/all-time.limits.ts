/**
 * An all-time window's one slot, in seconds (year 3554): the scripts see a rolling window of this period
 * and interval, whose one slot starts at 0 and is never due. Its due time in ms (5e13) stays below 1e14,
 * so Lua's tostring (%.14g) writes it as plain digits.
 */
export const ALL_TIME_SEC = 50_000_000_000;

/** Why an all-time window of a board PUT is refused. */
export const ALL_TIME_MESSAGES = {
  allTimeTakes: (field: string, key: string) =>
    `${field}.${key}: an all-time window keeps every event for good in one slot (it takes a name only: no period, interval, calendar, snapshots or archive)`,
  allTimeNeedsName: (field: string) => `${field}: an all-time window needs a name`,
};
