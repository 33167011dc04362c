import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { settingProperties } from '../../../common/dto';
import { modulesOnly, type BoardOption, luaModulesIn } from '../board-option';
import type { WindowOption } from '../window-option';
import { SNAPSHOT_KEEP, SNAPSHOT_TOP_ITEMS } from './snapshots.limits';

/** A window's `snapshots`: the history it keeps. */
export class SnapshotsDto {
  @ApiProperty({
    type: 'integer',
    minimum: SNAPSHOT_KEEP.min,
    maximum: SNAPSHOT_KEEP.max,
    description: 'Slot boundaries of history kept (each snapshot lives keep intervals)',
  })
  @IsInt()
  @Min(SNAPSHOT_KEEP.min)
  @Max(SNAPSHOT_KEEP.max)
  keep!: number;

  @ApiProperty({
    type: 'integer',
    minimum: SNAPSHOT_TOP_ITEMS.min,
    maximum: SNAPSHOT_TOP_ITEMS.max,
    description: 'Rows of the listing each snapshot stores',
  })
  @IsInt()
  @Min(SNAPSHOT_TOP_ITEMS.min)
  @Max(SNAPSHOT_TOP_ITEMS.max)
  top!: number;
}

/**
 * A window PUT's `snapshots` field (in the order board.dto's other nested settings stack theirs) and a
 * window view's (present when the window keeps them).
 */
export const { put: SnapshotsProperty, view: SnapshotsViewProperty } = settingProperties(
  SnapshotsDto,
  'snapshots must be an object like { "keep": 24, "top": 100 }',
  "Keep the window's top rows at each slot boundary (GET /boards/:board/history, previousRank)",
  'Present when the window keeps snapshots',
);

/** At each slot boundary the window's top `top` rows are stored; the newest `keep` boundaries are kept. */
export interface SnapshotSpec {
  keep: number;
  top: number;
}

/** A window's part of the window config: its history, absent when it keeps none. */
export interface SnapshotsWindowSpec {
  snapshots?: SnapshotSpec;
}

/** A PUT window's `snapshots` field. */
class SnapshotsPutFields {
  @SnapshotsProperty()
  snapshots?: SnapshotsDto;
}

/** A window view's `snapshots` field. */
class SnapshotsViewFields {
  @SnapshotsViewProperty()
  snapshots?: SnapshotsDto;
}

/** A rolling window's snapshots: its setting as the PUT gives it, shown when kept (a calendar window's are its archive). */
export const snapshotsWindowOption: WindowOption<SnapshotsWindowSpec, SnapshotsViewFields, SnapshotsPutFields> = {
  name: 'snapshots',
  putFields: SnapshotsPutFields,
  viewFields: SnapshotsViewFields,
  putKeys: ['snapshots'],
  fromPut: ({ snapshots }) => {
    const asked = snapshots as SnapshotSpec | undefined;
    return asked ? { snapshots: { keep: asked.keep, top: asked.top } } : {};
  },
  view: ({ snapshots }) => (snapshots ? { snapshots } : {}),
};

/**
 * Window history: snapshot_lib.lua takes a window's listing at its slot boundaries (and keeps the
 * board's change version; snapshot_rows_lib.lua stores and reads a listing's text), previous_ranks_lib.lua
 * answers each row's rank in the latest one (previousRank), snapshot_shown_lib.lua which kept rows a read
 * shows under the board's exceptions, snapshot_kept_lib.lua finds a kept snapshot for a history read and
 * drops history on a config change.
 *
 * Its setting is each window's (`windows[].snapshots`, a calendar window's `archive` is kept the same
 * way), not a field of the board: the window config carries it (snapshotsWindowOption, WindowSpec.snapshots),
 * so the fields here stay empty.
 */
export const snapshotsOption: BoardOption<object> = modulesOnly(
  'snapshots',
  luaModulesIn(
    __dirname,
    'snapshot_rows_lib.lua',
    'snapshot_lib.lua',
    'snapshot_kept_lib.lua',
    'previous_ranks_lib.lua',
    'snapshot_shown_lib.lua',
  ),
);
