-- module: call_state
-- requires: hooks, reader
-- call_lib: the state of the call running now, the one mutable top-level state of a ranking library.
-- In a function library the shared modules' top level lives from call to call (until the next
-- FUNCTION LOAD on that node), so every function starts with begin_call: it binds this call's keys
-- and args and counts the call (CALL.seq: what a module keeps per call, views_lib's views, the caches
-- call_cache empties, tells a later call by it). The call's keys and args stay here: the shared
-- modules take what they need as named fields (CALL, the windows bind_windows names), never by
-- offsets into the call's arguments.
-- Redis runs one function at a time and a call never reaches another, so nothing can see a half-bound
-- state; a call that failed half-way leaves nothing the next begin_call does not reset.
-- KEYS: 0

-- The keys and args of the call running now (begin_call): read here only.
local BOUND = { keys = nil, args = nil }

-- The call running now, bound once by begin_call from the handler's keys: what the shared modules
-- read of them. cfg_key: keys[1], the board shard's config hash (every function that reaches those
-- modules takes it first); seq: the call's number, which a per-call cache keeps to tell a later
-- call's (call_cache) instead of being emptied as each call begins; draining: the expired slot's
-- start (a string) while expiry takes it out of the results (results_changed hooks ask), else false;
-- writes: true once a write of the board's items began (board_write's start, the increment), which may
-- then keep a count's work in keys of the shard for the call (a read is no-writes: Redis refuses them);
-- rebase_chunk: the decay view members the call may move to a new landmark (views_lib; nil: the view's
-- rebaseChunk), an admin step's share of its units (actor_lib's bound_rebase); drain: what the call may
-- still drain of expired slots (drain_lib's weighed drain expire_all was given; nil: none yet), which its
-- board's windows and every segment it names share;
-- work: what the options' counts inside Redis weighed so far (moderation_lib's WORK), which a coalesced
-- increment stops at (increment.lua's WORK_BUDGET); marks_ahead: how many tie marks the call is about to draw
-- on its board at most (segment_lib's pass over an entry's segments; nil: not told), for ties_lib to take
-- their sequence numbers in one step.
-- The header's fields (now_ms, budget) are the reader's (reader.HEADER, read by the handler first).
local CALL = { cfg_key = nil, seq = 0, draining = false, writes = false, drain = nil, work = 0, marks_ahead = nil }

-- The board config fields a call may read, from the one HMGET version_error makes (every function
-- on a board's windows starts with it): read here instead of one HGET each (the item cap, the end of
-- the latest block, the shard's slot due and indexed second: slot_due_lib, the options the board
-- enables: `options`, whether a config write left the options' maps to prune: `pruning`, prune_lib;
-- and the fields an option reads on every board, whatever `options` names: each
-- option's module adds its own with config_field_add, `every_board`), which was a third of a
-- one-window increment's Redis commands. The fields of the options the board enables (config_field_add)
-- come with a second HMGET, only on a board enabling one; an option it does not enable holds none of
-- its fields (false). Valid for the config hash `cfg_key` of this call only (nil: nothing read yet); a
-- function writing these fields (board_put, shard_sync) never calls version_error, so never reads a
-- stale copy, and the options' writers write their copy too (config_field_written). `hooks`: the hot
-- hooks of the options this board enables (hooks_of); `enabled`: what options_of answered the last
-- read. `settle_due`: the shard's slot due expire_all found in this call (unix s; nil: none), for
-- settle_slot_due; `oldest_live`: the start of the oldest live slot expire_window last found (false:
-- none; nil: not asked); `draining_from`: the first live slot of each window whose expired slots this
-- call left indexed (nil: none). (Fields of one table: a library's main chunk holds few names.)
local CONFIG = {
  fields = { 'version', 'maxItems', 'shards', 'slotDueSec', 'indexedSec', 'options', 'pruning' },
  cfg_key = nil,
  hooks = hooks,
  enabled = nil,
  settle_due = nil,
  oldest_live = nil,
}
-- How many of CONFIG.fields are the core's own (read_config writes them out by name); the options'
-- every-board fields follow them, kept by read_config through EVERY_BOARD: their names in their order,
-- as config_field_add fills them. Written out there too (a loop over them cost a read 1 % of its
-- instructions), so their places are fixed: one more fails the library's load, and call-lib.spec.ts
-- checks that the options fill every one (an unused place would write nil into CONFIG each call).
local CORE_FIELDS = #CONFIG.fields
local EVERY_BOARD = { '-', '-', '-', '-', '-' }

-- The options' config fields: by option, and every one (a config naming no options reads them all).
local OPTION_FIELDS = { by_option = {}, all = {} }

-- What the config field `options` ("<config version>|<option>,<option>...") enables, by its value,
-- A memo kept from call to call (the shared modules' top level lives until the next FUNCTION LOAD) of values
-- that are pure functions of their key: read `by` directly; memo_put, its only writer, empties it whole once it
-- holds `max` keys, so a library's Lua memory stays bounded whatever boards and windows it meets.
local function memo(max) return { by = {}, size = 0, max = max } end

local function memo_put(kept, key, value)
  if kept.by[key] == nil then
    if kept.size >= kept.max then kept.by, kept.size = {}, 0 end
    kept.size = kept.size + 1
  end
  kept.by[key] = value
  return value
end

-- kept from call to call (a pure function of it; emptied when it holds `max`): the hot hooks, the
-- option fields to read and those absent. A value written for another config version (a PUT of a
-- library before the field) enables every option, as a config without it does (EVERY). `last`: what
-- the config last read (`last_value`, `last_version`) enables.
local ENABLED = { kept = memo(256), last = nil, last_value = nil, last_version = nil }
local EVERY = { lists = hooks, read = OPTION_FIELDS.all, absent = {} }

-- Adds a board option's config field to the fields a call on a board enabling `option` reads, or
-- (`every_board`) to those every call reads with the version (at the library's load).
local function config_field_add(field, option, every_board)
  if every_board then
    local at = #CONFIG.fields - CORE_FIELDS + 1
    if at > #EVERY_BOARD then error('call_lib: more than ' .. #EVERY_BOARD .. ' every-board config fields') end
    CONFIG.fields[#CONFIG.fields + 1], EVERY_BOARD[at] = field, field
    return
  end
  local fields = OPTION_FIELDS.by_option[option] or {}
  OPTION_FIELDS.by_option[option] = fields
  fields[#fields + 1] = field
  OPTION_FIELDS.all[#OPTION_FIELDS.all + 1] = field
end

local function enabled_of(value)
  local known = ENABLED.kept.by[value]
  if known then return known end
  local stamp, names = string.match(value, '^(.*)|([^|]*)$')
  local on = {}
  for name in string.gmatch(names or '', '[^,]+') do on[name] = true end
  known = { version = stamp, lists = hooks.only(on), read = {}, absent = {} }
  for option, fields in pairs(OPTION_FIELDS.by_option) do
    local into = on[option] and known.read or known.absent
    for _, field in ipairs(fields) do into[#into + 1] = field end
  end
  return memo_put(ENABLED.kept, value, known)
end

-- What the config of `version` with the field `options` enables (EVERY: a config without it).
local function options_of(options, version)
  if not options then return EVERY end
  local known = enabled_of(options)
  if known.version ~= version then return EVERY end
  return known
end

local function begin_call(keys, args)
  local call, config = CALL, CONFIG
  BOUND.keys, BOUND.args = keys, args
  call.cfg_key, call.seq, call.draining, call.writes, call.rebase_chunk = keys[1], call.seq + 1, false, false, nil
  call.drain, call.work, call.marks_ahead = nil, 0, nil
  config.cfg_key, config.settle_due, config.draining_from = nil, nil, nil
  reader.forget_kept()
end

-- A named handler's first lines when it needs nothing more before its own work (and the shared starts'
-- first step): binds the call, then reads its args by the contract's names (reader.read_call: the
-- header, the function's own arguments, where its records start).
local function begin_named_call(keys, args, contract)
  begin_call(keys, args)
  local header, arg, records_at = reader.read_call(args, contract)
  return header, arg, records_at
end

-- The windows of the call, bound by bind_windows: the record the window modules take (`windows`):
-- count, and by 0-based window its keys (slots index, results) and rule (period_sec, interval_sec,
-- created_ms, origin_sec: the header's window fields, which the reader binds by name, bind_rules; its
-- rule_texts and rule_count are the reader's). One table for every call (its lists are refilled, so a
-- call builds none): valid until the next bind_windows, never changed by a reader.
local WINDOWS = { count = 0, slots = {}, tops = {}, period_sec = {}, interval_sec = {}, created_ms = {}, origin_sec = {},
  rule_texts = {}, rule_count = nil }

-- Binds the call's `window_count` windows: their keys as (slots, top) pairs from keys[first_key],
-- their rules from the header by name (reader.bind_rules: parsed once, and not again while a board's
-- calls send the same texts).
local function bind_windows(first_key, window_count)
  local keys, slots, tops = BOUND.keys, WINDOWS.slots, WINDOWS.tops
  reader.bind_rules(BOUND.args, window_count, WINDOWS)
  for w = 0, window_count - 1 do
    local at = first_key + 2 * w
    slots[w], tops[w] = keys[at], keys[at + 1]
  end
  WINDOWS.count = window_count
  return WINDOWS
end

-- The call's time (unix ms): its header's.
local function now_ms()
  return reader.HEADER.now_ms
end

-- `cache` (a table of the caller's) for this call: emptied when a call before this one filled it.
-- Its field `seq` (the call that last used it) is the caller's to leave alone.
local function call_cache(cache)
  if cache.seq ~= CALL.seq then
    cache.seq = CALL.seq
    if next(cache.by) ~= nil then cache.by = {} end
  end
  return cache.by
end

-- Reads the config fields of `cfg_key` (one HMGET, and one more for the fields of the options the
-- board enables) and keeps them for the call; answers the stored values in CONFIG.fields order
-- (false: absent).
local function read_config(cfg_key)
  local stored = redis.call('HMGET', cfg_key, unpack(CONFIG.fields))
  -- The core's fields kept by name, written out in CONFIG.fields' order (call-lib.spec.ts checks it):
  -- every call runs this, and a loop over names costs about three times the Lua instructions; then
  -- the options' every-board fields, by their places (EVERY_BOARD).
  local config, every = CONFIG, EVERY_BOARD
  config.version, config.maxItems, config.shards, config.slotDueSec, config.indexedSec, config.options, config.pruning =
    stored[1], stored[2], stored[3], stored[4], stored[5], stored[6], stored[7]
  config[every[1]], config[every[2]], config[every[3]], config[every[4]], config[every[5]] =
    stored[8], stored[9], stored[10], stored[11], stored[12]
  config.cfg_key = cfg_key
  -- Most calls read the config the last one did: what it enables is known without a lookup.
  local on = ENABLED.last
  if CONFIG.options ~= ENABLED.last_value or CONFIG.version ~= ENABLED.last_version or not on then
    on = options_of(CONFIG.options, CONFIG.version)
    ENABLED.last, ENABLED.last_value, ENABLED.last_version = on, CONFIG.options, CONFIG.version
  end
  CONFIG.hooks = on.lists
  -- Only read_config writes the options' fields: those of the last call's options stay as it left them.
  if on ~= CONFIG.enabled then
    local absent = on.absent
    for i = 1, #absent do CONFIG[absent[i]] = false end
    CONFIG.enabled = on
  end
  local read = on.read
  if #read == 0 then return stored end
  local values = stored[1] and redis.call('HMGET', cfg_key, unpack(read)) or {}
  for i = 1, #read do CONFIG[read[i]] = values[i] or false end
  return stored
end

-- Other config hashes' fields asked in this call (another shard's, across a sharded board's counts):
-- one HMGET of CONFIG.fields and every option's per hash and call, not one HGET per field and count.
local FOREIGN = { seq = 0, by = {} }

-- One of CONFIG.fields or an option's field of the config hash `cfg_key` (false: absent): kept by
-- read_config, or for another hash read once in the call (FOREIGN).
local function config_field(cfg_key, field)
  if cfg_key == CONFIG.cfg_key then return CONFIG[field] end
  local by = call_cache(FOREIGN)
  local fields = by[cfg_key]
  if not fields then
    local names = { unpack(CONFIG.fields) }
    for _, name in ipairs(OPTION_FIELDS.all) do names[#names + 1] = name end
    local values = redis.call('HMGET', cfg_key, unpack(names))
    fields = {}
    for i, name in ipairs(names) do fields[name] = values[i] or false end
    by[cfg_key] = fields
  end
  local value = fields[field]
  if value == nil then return redis.call('HGET', cfg_key, field) end
  return value
end

-- A config field this call writes: its copy (read_config's, or FOREIGN's) follows. The next
-- read_config then sets every option field again: one of an option the board does not enable would
-- otherwise keep this value into the next call whose options read the same (another board's).
local function config_field_written(cfg_key, field, value)
  if cfg_key == CONFIG.cfg_key then CONFIG[field], CONFIG.enabled = value, nil end
  local fields = call_cache(FOREIGN)[cfg_key]
  if fields then fields[field] = value end
end

-- Writes the config field `field` of `cfg_key` holding a list, its `parts` joined by ';' ("a b;c d");
-- an empty list leaves no field.
local function store_list_field(cfg_key, field, parts)
  if #parts == 0 then
    redis.call('HDEL', cfg_key, field)
  else
    redis.call('HSET', cfg_key, field, table.concat(parts, ';'))
  end
end

-- The hot hooks (hooks_lib) for the config hash `cfg_key`: the call's board's enabled options' (read
-- by read_config), else every option's (the hooks then ask that config themselves).
local function hooks_of(cfg_key)
  if cfg_key == CONFIG.cfg_key then return CONFIG.hooks end
  return hooks
end

-- Stores the options' settings (hooks_lib config_stored: board_put, shard_sync) and which options
-- they enable, for the config `version` written with them.
local function store_options(cfg_key, settings, version)
  call_cache(FOREIGN)[cfg_key] = nil
  local stored, names = hooks.config_stored, {}
  for i = 1, #stored do
    if stored[i](cfg_key, settings) then names[#names + 1] = hooks.option_of('config_stored', i) end
  end
  redis.call('HSET', cfg_key, 'options', version .. '|' .. table.concat(names, ','))
end

-- The board of `cfg_key` enables `option` from now on (an option's writer of a state its hooks act
-- on: moderation's states, an actor's weight), till the next board PUT stores what its settings
-- enable. A config naming no options enables every one already.
local function enable_option(cfg_key, option)
  local value = redis.call('HGET', cfg_key, 'options')
  if not value then return end
  local stamp, names = string.match(value, '^(.*)|([^|]*)$')
  for name in string.gmatch(names, '[^,]+') do
    if name == option then return end
  end
  value = stamp .. '|' .. (names == '' and option or names .. ',' .. option)
  redis.call('HSET', cfg_key, 'options', value)
  if cfg_key == CONFIG.cfg_key then
    CONFIG.options = value
    CONFIG.hooks = options_of(value, CONFIG.version).lists
  end
end

-- A PUT changing nothing (board_put, shard_sync): the options whose state the config hash holds
-- (hooks_lib config_kept) named in `options` again, in case a writer of a library from before the
-- field stored that state without naming its option.
local function keep_options(cfg_key)
  local kept = hooks.config_kept
  for i = 1, #kept do
    if kept[i](cfg_key) then enable_option(cfg_key, hooks.option_of('config_kept', i)) end
  end
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

-- Whether `key` is one of a group board's keys under its member board's tag (group_of_lib's
-- "<tag>:<W>%<G>:...", `%` in no name): its results rank groups, so the member board's strict order
-- and exceptions, which are its items', do not apply there.
local function of_group_board(key)
  return string.find(key, '%', (string.find(key, '}', 1, true) or 0) + 1, true) ~= nil
end

-- hooks_of for the config of the window results (or a sibling key of them) `top_key` (asked several
-- times by every call: cfg_key_of_top's known keys looked up in place).
local function hooks_of_top(top_key)
  local cfg_key = cfg_of_top.keys[top_key] or cfg_key_of_top(top_key)
  if cfg_key == CONFIG.cfg_key then return CONFIG.hooks end
  return hooks
end

-- A whole number's text as string.format('%d') writes it (a command's argument: a Lua number costs Redis a
-- snprintf("%.17g"), and string.format a vsnprintf), those below 1 024 in size made once and kept from call to call.
local INT_TEXT = {}
local function int_text(n)
  local text = INT_TEXT[n]
  if text then return text end
  text = string.format('%d', n)
  if n > -1024 and n < 1024 then INT_TEXT[n] = text end
  return text
end

call_state.int_text = int_text
call_state.memo = memo
call_state.memo_put = memo_put
call_state.begin_call = begin_call
call_state.begin_named_call = begin_named_call
call_state.bind_windows = bind_windows
call_state.call_cache = call_cache
call_state.now_ms = now_ms
call_state.config_field_add = config_field_add
call_state.cfg_key_of_top = cfg_key_of_top
call_state.of_group_board = of_group_board
call_state.hooks_of = hooks_of
call_state.hooks_of_top = hooks_of_top
call_state.store_options = store_options
call_state.enable_option = enable_option
call_state.keep_options = keep_options
call_state.read_config = read_config
call_state.config_field = config_field
call_state.config_field_written = config_field_written
call_state.store_list_field = store_list_field
call_state.CALL = CALL
call_state.CONFIG = CONFIG
