/** How a window combines an item's events: sums of increments, or the max / min / latest score recorded. */
export const AGGREGATES = ['sum', 'max', 'min', 'last'] as const;
export type Aggregate = (typeof AGGREGATES)[number];

/** The aggregate a config hash stores: absent on a sum board (boards from before aggregates included). */
export function aggregateOf(stored: string | undefined): Aggregate {
  const found = AGGREGATES.find((aggregate) => aggregate === stored);
  if (stored !== undefined && found === undefined)
    throw new Error(`stored aggregate "${stored}" is not one of ${AGGREGATES.join(', ')}`);
  return found ?? 'sum';
}
