-- module: call_state
-- declares: KEYS, ARGV
-- requires: hooks
-- call_lib: the state of the call running now, the one mutable top-level state of a ranking library.
-- The shared modules (idem_lib, window_lib, snapshot_lib, views_lib, board_write_lib) read the call's
-- keys and arguments as KEYS and ARGV, the way a script does. In a function library their top level
-- lives from call to call (until the next FUNCTION LOAD on that node), so every function starts with
-- begin_call: it binds this call's keys and args and forgets the views the previous call loaded.
-- Redis runs one function at a time and a call never reaches another, so nothing can see a half-bound
-- state; a call that failed half-way leaves nothing the next begin_call does not reset.
-- KEYS: 0

KEYS, ARGV = {}, {}

-- The call running now, bound once by begin_call from the handler's keys and args: what the shared
-- modules read instead of KEYS[1] and ARGV[2]. cfg_key: keys[1], the board shard's config hash (every
-- function that reaches those modules takes it first); now_ms: args[2], the common header's time (a
-- function whose args[2] is no time reaches no module that reads it).
local CALL = { cfg_key = nil, now_ms = nil }

-- The board shard's views, loaded by views_load (views_lib) at most once per call.
-- segments: segment -> its views by name (views_lib's segment_views), registered on first use in a call.
local VIEWS = { loaded = false, by_top = {}, by_name = {}, list = {}, segments = {}, now_sec = 0 }

-- The board's aggregate (sum, max, min, last), read with the config version (version_error): expiry
-- drains a slot of a sum board by subtraction and of the others by recomputing (aggregate_lib).
local BOARD = { aggregate = 'sum' }

-- The board config fields a call may read, from the one HMGET version_error makes (every function
-- on a board's windows starts with it): read here instead of one HGET each (views, snapshots, the
-- options' fields (each option's module adds its own with config_field_add), the item cap, a like's actors, the end of the latest block, the shard's slot due and indexed second:
-- slot_due_lib), which
-- was a third of a one-window increment's Redis commands. Valid for the config hash `cfg_key` of this
-- call only (nil: nothing read yet); a function writing these fields (board_put, shard_sync) never
-- calls version_error, so never reads a stale copy, and a retraction's block (actor_lib) and the slot
-- due's writers (slot_due_lib) write their copy too. `settle_due`: the shard's slot due
-- expire_all found in this call (unix s; nil: none), for settle_slot_due; `oldest_live`: the start of
-- the oldest live slot expire_window last found (false: none; nil: not asked); `draining_from`: the
-- first live slot of each window whose expired slots this call left indexed (nil: none). (Fields of one table: a
-- library's top level may hold at most 200 locals, and it holds about 190.)
local CONFIG = {
  fields = { 'version', 'aggregate', 'views', 'snapshots', 'maxItems', 'shards', 'actors', 'blockedUntil', 'slotDueSec',
    'indexedSec' },
  cfg_key = nil,
  settle_due = nil,
  oldest_live = nil,
}

-- Adds a board option's config field to the fields every call reads (at the library's load).
local function config_field_add(field)
  CONFIG.fields[#CONFIG.fields + 1] = field
end

local function begin_call(keys, args)
  KEYS, ARGV = keys, args
  CALL.cfg_key, CALL.now_ms = keys[1], tonumber(args[2])
  VIEWS.loaded = false
  BOARD.aggregate = 'sum'
  CONFIG.cfg_key, CONFIG.settle_due, CONFIG.draining_from = nil, nil, nil
  local began = hooks.call_began
  for i = 1, #began do began[i]() end
end

-- Reads the config fields of `cfg_key` (one HMGET) and keeps them for the call; answers the stored
-- values in CONFIG.fields order (false: absent).
local function read_config(cfg_key)
  local fields = CONFIG.fields
  local stored = redis.call('HMGET', cfg_key, unpack(fields))
  for i = 1, #fields do CONFIG[fields[i]] = stored[i] end
  CONFIG.cfg_key = cfg_key
  return stored
end

-- One of CONFIG.fields of the config hash `cfg_key` (false: absent): kept by read_config, else read.
local function config_field(cfg_key, field)
  if cfg_key == CONFIG.cfg_key then return CONFIG[field] end
  return redis.call('HGET', cfg_key, field)
end

-- "<tag>:<window>:top" -> "<tag>:cfg": names hold no braces, so the tag ends at the first "}".
-- Kept from call to call (a pure function of the key), so a call on a known window builds no string;
-- emptied when it holds `max` keys.
local cfg_of_top = { keys = {}, size = 0, max = 1024 }

local function cfg_key_of_top(top_key)
  local cfg_key = cfg_of_top.keys[top_key]
  if cfg_key then return cfg_key end
  if cfg_of_top.size >= cfg_of_top.max then cfg_of_top.keys, cfg_of_top.size = {}, 0 end
  cfg_key = string.match(top_key, '^[^}]*}') .. ':cfg'
  cfg_of_top.keys[top_key], cfg_of_top.size = cfg_key, cfg_of_top.size + 1
  return cfg_key
end

call_state.begin_call = begin_call
call_state.config_field_add = config_field_add
call_state.cfg_key_of_top = cfg_key_of_top
call_state.read_config = read_config
call_state.config_field = config_field
call_state.CALL = CALL
call_state.VIEWS = VIEWS
call_state.BOARD = BOARD
call_state.CONFIG = CONFIG
