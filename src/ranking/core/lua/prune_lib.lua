-- module: prune
-- requires: call_state, hooks
-- prune_lib: what a config write dropping windows (a reset: board_put, shard_sync) leaves the options'
-- per-item maps to forget (groups_lib's groups, item_data_lib's data): the entries of items no window
-- holds any more. The write itself only marks them (hook windows_dropped: each option's own cursor);
-- bounded steps (prune_step, driven by the board PUT) then walk each map, so no call's work grows with
-- the shard's items. Until a step reaches an entry it is still stored, hidden thus:
--   * a stale entry's item is in no window: a read of a window's rows never names it;
--   * a write about to add items to the windows first settles them (settle: hook prune_items), so an
--     item back in a window keeps an entry only if one of the kept windows held it at the reset;
--   * an item leaving its last kept window forgets its entry as it always does (results_changed).
-- So every entry a step finds is decided as the reset would have decided it, and the maps end equal
-- to an immediate reset's.
-- KEYS: 0
-- Config hash field: pruning ("1" while a step has work left; read with the config, call_lib)

-- Marks the shard of `cfg_key` as pruning: the options' own cursors say what is left.
local function mark(cfg_key)
  redis.call('HSET', cfg_key, 'pruning', '1')
end

-- One step: each option's prune (hooks_lib prune_step) in turn, about `entries` entries in all.
-- Answers true once nothing is left (the mark then goes).
local function step(cfg_key, entries)
  if redis.call('HGET', cfg_key, 'pruning') ~= '1' then return true end
  local steps = hooks.prune_step
  for i = 1, #steps do
    local done
    entries, done = steps[i](cfg_key, entries)
    if not done then return false end
  end
  redis.call('HDEL', cfg_key, 'pruning')
  return true
end

-- Before a write adds `items` (a list, or one item id) to the shard's windows: while the shard
-- prunes, the options forget the entries of those of them no window holds (hooks_lib prune_items).
-- Nothing asked and nothing built otherwise: the mark is read with the config.
local function settle(cfg_key, items)
  if not call_state.config_field(cfg_key, 'pruning') then return end
  if type(items) == 'string' then items = { items } end
  if #items == 0 then return end
  local settles = hooks.prune_items
  for i = 1, #settles do settles[i](cfg_key, items) end
end

prune.mark = mark
prune.step = step
prune.settle = settle
