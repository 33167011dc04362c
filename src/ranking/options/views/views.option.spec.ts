import { fieldErrorsOf } from '../../../../test/support/dto-errors';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOARD_OPTIONS, OPTION_LUA_MODULES, optionsOf } from '../registry';
import { VIEWS_PER_BOARD } from './views.limits';
import { ViewsProperty, viewsOption } from './views.option';

/** The option's PUT field alone, as the board DTO declares it. */
const errorsOf = fieldErrorsOf('views', ViewsProperty());

const view = { name: 'trending', mode: 'decay', window: '1h', halfLife: '30m' };

describe('the views option', () => {
  it('validates the PUT field: at most VIEWS_PER_BOARD objects of a known mode, not null', () => {
    expect(errorsOf({ views: [view] })).toEqual([]);
    expect(errorsOf({})).toEqual([]);
    expect(errorsOf({ views: null })).toContain('views must not be null');
    expect(errorsOf({ views: [1] })).toContain('views must hold objects like { "name": "...", "mode": "..." }');
    expect(errorsOf({ views: [{ ...view, mode: 'fast' }] })).toContainEqual(
      expect.stringMatching(/^mode must be one of decay, hot/),
    );
    expect(errorsOf({ views: [{ ...view, halfLife: '3x' }] })).toContainEqual(
      expect.stringMatching(/^halfLife must be a duration/),
    );
    const many = Array.from({ length: VIEWS_PER_BOARD.max + 1 }, (_, i) => ({ ...view, name: `v${i}` }));
    expect(errorsOf({ views: many })).toContain(`views must contain no more than ${VIEWS_PER_BOARD.max} elements`);
  });

  it('adds no field to the options settings: the views go their own way (resolved against the windows)', () => {
    expect(viewsOption.fields).toEqual([]);
    expect(optionsOf({ ...({ views: [view] } as object) })).not.toHaveProperty('views');
  });

  it('is in the registry, its Lua modules among the libraries, registering only hooks hooks_lib declares', () => {
    expect(BOARD_OPTIONS).toContain(viewsOption);
    expect(OPTION_LUA_MODULES).toEqual(expect.arrayContaining([...viewsOption.luaModules]));
    const declared = readFileSync(join(__dirname, '../../core/lua/hooks_lib.lua'), 'utf8');
    // Each module's one registration (hooks.register_all under the option's name): each hook's name, then its function.
    const registered = viewsOption.luaModules.flatMap((path) => {
      const list = /^hooks\.register_all\('views', \{([^}]*)\}\)/m.exec(readFileSync(path, 'utf8'))?.[1] ?? '';
      return [...list.matchAll(/'(\w+)', /g)].map(([, hook]) => hook);
    });
    expect(registered.sort()).toEqual(['reads_sums', 'sum_changed']);
    for (const hook of registered) expect(declared).toContain(`hooks.${hook} = {}`);
  });
});
