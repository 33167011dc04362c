-- call_lib: the state of the call running now, the one mutable top-level state of a ranking library.
-- The shared modules (idem_lib, window_lib, snapshot_lib, views_lib, board_write_lib) read the call's
-- keys and arguments as KEYS and ARGV, the way a script does. In a function library their top level
-- lives from call to call (until the next FUNCTION LOAD on that node), so every function starts with
-- begin_call: it binds this call's keys and args and forgets the views the previous call loaded.
-- Redis runs one function at a time and a call never reaches another, so nothing can see a half-bound
-- state; a call that failed half-way leaves nothing the next begin_call does not reset.
-- KEYS: 0

local KEYS, ARGV = {}, {}

-- The board shard's views, loaded by views_load (views_lib) at most once per call.
-- segments: segment -> its views by name (views_lib's segment_views), registered on first use in a call.
local VIEWS = { loaded = false, by_top = {}, by_name = {}, list = {}, segments = {}, now_sec = 0 }

-- The board's aggregate (sum, max, min, last), read with the config version (version_error): expiry
-- drains a slot of a sum board by subtraction and of the others by recomputing (aggregate_lib).
local BOARD = { aggregate = 'sum' }

local function begin_call(keys, args)
  KEYS, ARGV = keys, args
  VIEWS.loaded = false
  BOARD.aggregate = 'sum'
end
