/** Every message the stats feature answers with, written once. */
export const STATS_MESSAGES = {
  nothingRecorded: (context: string, type: string, hour: string) =>
    `nothing recorded for context "${context}", type "${type}" in the ${hour} hour`,
  badValue: (maxAbsValue: number) => `value must be a finite number between -${maxAbsValue} and ${maxAbsValue}`,
  badContext: (rule: string) => `context must be ${rule}`,
  badType: (rule: string) => `type must be ${rule}`,
  reservedType: (type: string) =>
    `type "${type}" is reserved: the service records it itself (route access times); record your values under another type`,
};
