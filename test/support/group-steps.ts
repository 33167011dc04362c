import fc from 'fast-check';

/** The group-board property specs' steps that every one of them draws the same way. */

/** One of `items` joins one of `groups` (4 in 5) or leaves its group (null). */
export const joinStep = (items: readonly string[], groups: readonly string[]) =>
  fc.record({
    kind: fc.constant('join' as const),
    item: fc.constantFrom(...items),
    group: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...groups) }, { weight: 1, arbitrary: fc.constant(null) }),
  });

/** An event of one of `items`, of an amount in -3..6 other than 0. */
export const incrementStep = (items: readonly string[]) =>
  fc.record({
    kind: fc.constant('increment' as const),
    item: fc.constantFrom(...items),
    amount: fc.integer({ min: -3, max: 6 }).filter((amount) => amount !== 0),
  });

/** One of `items` retracted (an item retraction run to its end). */
export const retractStep = (items: readonly string[]) =>
  fc.record({ kind: fc.constant('retract' as const), item: fc.constantFrom(...items) });
