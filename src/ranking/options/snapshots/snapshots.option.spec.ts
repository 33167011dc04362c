import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fieldErrorsOf } from '../../../../test/support/dto-errors';
import { BOARD_OPTIONS, OPTION_LUA_MODULES } from '../registry';
import { SNAPSHOT_KEEP, SNAPSHOT_TOP_ITEMS } from './snapshots.limits';
import { SnapshotsProperty, snapshotsOption } from './snapshots.option';

/** The option's PUT field alone, as the window DTO declares it. */
const errorsOf = fieldErrorsOf('snapshots', SnapshotsProperty());

describe('the snapshots option', () => {
  it("validates a window's field: an object of keep and top within their limits, not null", () => {
    expect(errorsOf({ snapshots: { keep: 24, top: 100 } })).toEqual([]);
    expect(errorsOf({})).toEqual([]);
    expect(errorsOf({ snapshots: null })).toContain('snapshots must not be null');
    expect(errorsOf({ snapshots: 3 })).toContain('snapshots must be an object like { "keep": 24, "top": 100 }');
    expect(errorsOf({ snapshots: { keep: SNAPSHOT_KEEP.max + 1, top: 1 } })).toEqual([
      `keep must not be greater than ${SNAPSHOT_KEEP.max}`,
    ]);
    expect(errorsOf({ snapshots: { keep: 1, top: SNAPSHOT_TOP_ITEMS.min - 1 } })).toEqual([
      `top must not be less than ${SNAPSHOT_TOP_ITEMS.min}`,
    ]);
  });

  it('is in the registry with its Lua modules, adding no board field (snapshots are a window setting)', () => {
    expect(BOARD_OPTIONS).toContain(snapshotsOption);
    expect(snapshotsOption.fields).toEqual([]);
    expect(OPTION_LUA_MODULES).toEqual(expect.arrayContaining([...snapshotsOption.luaModules]));
  });

  it.each(['calendar/archive_lib.lua', 'tiebreak/tiebreak_lib.lua'])(
    'writes the positions of the longest listing as the library loads (%s LISTING_ROWS)',
    (file) => {
      const lua = readFileSync(join(__dirname, '..', file), 'utf8');
      expect(Number(/^local LISTING_ROWS = (\d+)$/m.exec(lua)?.[1])).toBe(SNAPSHOT_TOP_ITEMS.max);
    },
  );
});
