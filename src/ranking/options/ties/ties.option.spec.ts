import { fieldErrorsOf } from '../../../../test/support/dto-errors';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as registry from '../registry';
import { LOOKUP_TIES_FIRST_WEIGHT, TIES_FIRST_WRITE_COST, TiesProperty, tiesOption } from './ties.option';

/** The option's PUT field alone, as the board DTO declares it. */
const errorsOf = fieldErrorsOf('ties', TiesProperty());

describe('the ties option', () => {
  it('reads its mode from the stored config (absent: shared) and shows it only when strict', () => {
    expect(registry.optionsFromStored({ ties: 'first' })).toEqual({ ties: 'first' });
    expect(registry.optionsFromStored({})).toEqual({ ties: 'shared' });
    expect(registry.optionsView({ ties: 'first' })).toEqual({ ties: 'first' });
    expect(registry.optionsView({ ties: 'shared' })).toEqual({});
  });

  it("decodes board_put's settings, refusing a mode it does not know", () => {
    expect(registry.optionsFromReply('tbRankBoardPut', '{"ties":"first"}')).toEqual({ ties: 'first' });
    expect(() => registry.optionsFromReply('tbRankBoardPut', '{"ties":"last"}')).toThrow(/unexpected shape.*"last"/);
    expect(() => registry.optionsFromReply('tbRankBoardPut', '{}')).toThrow(/unexpected shape/);
  });

  it('passes a PUT its field, absent when the client left it out', () => {
    expect(registry.optionsOf({ ties: 'first' })).toEqual({ ties: 'first' });
    expect(registry.optionsOf({}).ties).toBeUndefined();
  });

  it('weighs a strict board: write places, lookup counts, strict ranks', () => {
    expect(registry.optionsWriteCostPerPlace({ ties: 'first' })).toBe(TIES_FIRST_WRITE_COST);
    expect(registry.optionsWriteCostPerPlace({ ties: 'shared' })).toBe(0);
    expect(registry.optionsCountWeight({ ties: 'first' })).toBe(LOOKUP_TIES_FIRST_WEIGHT);
    expect(registry.optionsCountWeight({})).toBe(1);
    expect(registry.strictRanks({ ties: 'first' })).toBe(true);
    expect(registry.strictRanks({ ties: 'shared' })).toBe(false);
    expect(registry.COSTLIEST_OPTIONS).toMatchObject({ ties: 'first' });
    expect(registry.COUNT_WEIGHT_DOC).toContain(`x${LOOKUP_TIES_FIRST_WEIGHT} on a ties: first board`);
  });

  it('validates the PUT field: one of the modes, not null', () => {
    expect(errorsOf({ ties: 'first' })).toEqual([]);
    expect(errorsOf({})).toEqual([]);
    expect(errorsOf({ ties: 'last' })).toEqual(['ties must be one of shared, first']);
    expect(errorsOf({ ties: null })).toContain('ties must not be null');
  });

  it('is in the registry, its Lua module among the libraries, registering only hooks hooks_lib declares', () => {
    expect(registry.BOARD_OPTIONS).toContain(tiesOption);
    expect(registry.OPTION_LUA_MODULES).toEqual(expect.arrayContaining([...tiesOption.luaModules]));
    const declared = readFileSync(join(__dirname, '../../core/lua/hooks_lib.lua'), 'utf8');
    const source = readFileSync(tiesOption.luaModules[0], 'utf8');
    // Its one registration (hooks.register_all): each hook's name, then its function.
    const list = /^hooks\.register_all\('ties', \{([^}]*)\}\)/m.exec(source)?.[1] ?? '';
    const registered = [...list.matchAll(/'(\w+)', /g)];
    expect(registered.length).toBeGreaterThan(0);
    for (const [, hook] of registered) expect(declared).toContain(`hooks.${hook} = {}`);
  });
});
