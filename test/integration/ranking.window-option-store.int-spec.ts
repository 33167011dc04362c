import type { WindowSpec } from '../../src/ranking/core/window-math';
import { RANKING } from '../../src/ranking/ranking.functions';
import { useRankingFunctions } from '../support/ranking-functions';

/**
 * A window option's setting is the window's field in the stored windows (issue #46): board_put keeps
 * whatever fields a window holds, so a PUT changing one window option's setting alone (no period,
 * interval or snapshots changed) is stored and answered, as a trivial window option needs.
 */
describe("board_put: a window option's setting changed alone (real Redis)", () => {
  const fns = useRankingFunctions();
  const nowMs = Date.UTC(2026, 0, 1);
  const hour = { name: 'h', periodSec: 3600, intervalSec: 60 };

  it('is stored and answered; the same PUT again leaves the board unchanged', async () => {
    const board = await fns.board([hour], nowMs);
    const put = async (windows: object[], version: string) => {
      const reply = await fns.functions.call(RANKING.functions.boardPut, {
        ...{ keys: board.keys, windows: windows as WindowSpec[], shards: 1, maxItems: undefined, views: [] },
        ...{ version, reset: false, nowMs: nowMs + 1000 },
      });
      return { status: reply.status, windowsJson: reply.status === 'conflict' ? '' : reply.windowsJson };
    };
    const probed = await put([{ ...hour, probe: true }], 'v-probe');
    expect([probed.status, JSON.parse(probed.windowsJson)]).toEqual([
      'updated',
      [{ ...hour, probe: true, createdAtMs: nowMs }],
    ]);
    expect((await put([{ ...hour, probe: true }], 'v-again')).status).toBe('unchanged');
    const nested = await put([{ ...hour, probe: { level: 2 } }], 'v-nested');
    expect([nested.status, JSON.parse(nested.windowsJson)]).toEqual([
      'updated',
      [{ ...hour, probe: { level: 2 }, createdAtMs: nowMs }],
    ]);
    expect((await put([{ ...hour, probe: { level: 2 } }], 'v-same')).status).toBe('unchanged');
    expect((await put([hour], 'v-off')).status).toBe('updated');
  });
});
