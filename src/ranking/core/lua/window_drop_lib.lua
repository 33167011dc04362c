-- module: window_drop
-- requires: hooks, keyspace
-- window_drop_lib: unlinking a window's keys when a board put or a shard sync removes or remakes it
-- (board_put, shard_sync), a module of the function libraries on boards beside window_lib, which keeps
-- a live window's slots, expiry and writes.
-- KEYS: 0

-- Unlinks every key of one window: its slot hashes (found through its slots index), index and results.
-- The window's keys are named after the board config key "<tag>:cfg" as "<tag>:<window>:...".
-- The options' copies of the window (hooks_lib window_copies: each segment's) go with it.
local function drop_window(cfg_key, window_name)
  local bases = { keyspace.sibling_key(cfg_key, 'cfg', window_name .. ':') }
  for _, copies in ipairs(hooks.window_copies) do
    for _, base in ipairs(copies(cfg_key, window_name)) do bases[#bases + 1] = base end
  end
  for _, base in ipairs(bases) do
    local starts = redis.call('ZRANGE', base .. 'slots', 0, -1)
    for _, start in ipairs(starts) do
      redis.call('UNLINK', base .. 'slot:' .. start)
    end
    redis.call('UNLINK', base .. 'slots', base .. 'top', base .. 'newest')
    local dropped = hooks.window_dropped
    for i = 1, #dropped do dropped[i](base, starts) end
  end
end

window_drop.drop_window = drop_window
