import { COSTLIEST_OPTIONS, optionsFromReply, optionsView, optionsWriteCostPerPlace } from '../registry';
import { expectWholeNumberKept } from '../../../../test/support/board-settings';
import { ACTOR_CAP_WRITE_COST, actorCapsOption, CAP_PER_ITEM, capOf } from './actor-caps.option';

describe('the actor-caps option', () => {
  it("reads a PUT's cap from its actors (0: none; omitted: the stored one)", () => {
    expect([capOf(true), capOf({}), capOf({ capPerItem: 3 }), capOf(undefined)]).toEqual([
      { capPerItem: 0 },
      { capPerItem: 0 },
      { capPerItem: 3 },
      {},
    ]);
  });

  it('keeps the cap in the config hash and board_put answer, absent when none', () => {
    expectWholeNumberKept(actorCapsOption, 'capPerItem');
    expect(optionsFromReply('fn', '{"ties":"shared","capPerItem":0}')).not.toHaveProperty('capPerItem');
    expect(optionsView({ capPerItem: 7 })).toMatchObject({ capPerItem: 7 });
    expect(optionsView({ capPerItem: 0 })).not.toHaveProperty('capPerItem');
  });

  it("weighs a capped board's write places; its costliest setting is the largest cap", () => {
    expect(optionsWriteCostPerPlace({ capPerItem: 5 })).toBe(ACTOR_CAP_WRITE_COST);
    expect(optionsWriteCostPerPlace({})).toBe(0);
    expect(COSTLIEST_OPTIONS).toMatchObject({ capPerItem: CAP_PER_ITEM.max });
  });
});
