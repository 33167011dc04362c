import { fieldErrorsOf } from '../../../../test/support/dto-errors';
import { InvalidInputError } from '../../../common/errors';
import { COSTLIEST_OPTIONS, OPTION_LUA_MODULES, optionsFromReply, optionsFromStored, optionsView } from '../registry';
import { checkGroup, groupsOption, GroupsProperty } from './groups.option';

/** The option's PUT field alone, as the board DTO declares it. */
const errorsOf = fieldErrorsOf('groups', GroupsProperty());

describe('the groups option', () => {
  it('takes true or false, or nothing; refuses null and other values', () => {
    expect(errorsOf({})).toEqual([]);
    expect(errorsOf({ groups: true })).toEqual([]);
    expect(errorsOf({ groups: false })).toEqual([]);
    expect(errorsOf({ groups: 'yes' })).toEqual(['groups must be true or false']);
    expect(errorsOf({ groups: null }).length).toBeGreaterThan(0);
  });

  it('reads its setting from the config hash and board_put, and shows it only when on', () => {
    expect(optionsFromStored({ groups: '1' })).toMatchObject({ groups: true });
    expect(optionsFromStored({})).not.toHaveProperty('groups');
    expect(optionsFromReply('board_put', '{"ties":"shared","order":"desc","groups":true}')).toMatchObject({
      groups: true,
    });
    expect(optionsFromReply('board_put', '{"ties":"shared","order":"desc","groups":false}')).not.toHaveProperty(
      'groups',
    );
    expect(() => groupsOption.fromReply({ groups: 'on' })).toThrow(/groups "on" is not true or false/);
    expect(optionsView({ groups: true })).toMatchObject({ groups: true });
    expect(optionsView({ groups: false })).not.toHaveProperty('groups');
  });

  it('adds no cost unit per results place (GROUPS_WRITE_COST); its module is in every library', () => {
    expect(groupsOption.writeCostPerPlace?.({ groups: true })).toBe(0);
    expect(COSTLIEST_OPTIONS).not.toHaveProperty('groups');
    expect(OPTION_LUA_MODULES.some((path) => path.endsWith('groups_lib.lua'))).toBe(true);
  });

  it('refuses a group on a board without groups, naming the field', () => {
    expect(() => checkGroup('items.3.group', 'g', { name: 'plain' })).toThrow(InvalidInputError);
    expect(() => checkGroup('group', 'g', { name: 'plain' })).toThrow(/group: board "plain" keeps no groups/);
    expect(() => checkGroup('group', 'g', { name: 'grouped', groups: true })).not.toThrow();
    expect(() => checkGroup('group', undefined, { name: 'plain' })).not.toThrow();
  });
});
