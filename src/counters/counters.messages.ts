/** Every message the counters feature answers with, written once. */
export const COUNTER_MESSAGES = {
  counterNotFound: (name: string) => `counter "${name}" does not exist`,
  badCount: (maxCount: number) => `count must be a non-zero integer with |count| <= ${maxCount}`,
  badAt: () => 'at must be a non-negative integer of unix seconds',
  fromAfterTo: (fromSec: number, toSec: number) => `from (${fromSec}) must not be after to (${toSec})`,
  unknownPrecision: (given: string, precisionsSec: number[]) =>
    `${given}: precision must be one of ${precisionsSec.join(', ')} (seconds, or a duration such as 5s, 1m, 1h, 1d)`,
};
