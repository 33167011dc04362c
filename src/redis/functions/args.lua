-- module: reader
-- args: the argument reader every function of a library shares. Not a library of its own: a module
-- that function-library.ts assembles into each library's top level, so it is compiled once per
-- FUNCTION LOAD and its closures live as long as the library (a call builds none of them).
-- The TypeScript side that writes these arguments is src/redis/function-args.ts (headerArgs,
-- recordArgs): change both together.
--
-- A call's args start with the common header, then the function's own arguments:
--   args[1]  config version the caller built its keys from ("" when the function has none)
--   args[2]  now, unix milliseconds (scripts never read the server clock)
--   args[3]  budget: most expired-slot fields the call may drain
--   args[4]  W, number of windows (0 allowed)
--   args[5 ..]  W windows, each a record of the shape RECORD_FIELDS.header_window (HEADER_WINDOW_FIELDS
--               in function-args.ts), read by those names: period_sec, interval_sec, created_ms (unix
--               ms) and origin_sec (unix s: where the window's slots start; 0 for a rolling window;
--               boardHeader in src/ranking/core/script-call.ts writes them for a board)
-- Per-request data follows as records: a count, then that many rows of the fields the library
-- declared for it (RECORD_FIELDS, emitted by function-library.ts), read into named tables.

-- A bad argument is a caller bug: the error names what was wrong instead of a Lua "attempt to
-- perform arithmetic on a nil value" with a line number.
local function bad_args(what)
  return error({ err = 'TB_BAD_ARGS ' .. what })
end

-- A header window's arguments by name: each field's offset in its window's record (the names
-- TypeScript writes them in, RECORD_FIELDS.header_window), the first window's record at
-- FIRST_WINDOW_ARG. Every read of a window argument goes through these offsets.
local HEADER_WINDOW_ARGS = #RECORD_FIELDS.header_window
local FIRST_WINDOW_ARG = 5
local WINDOW_AT = {}
for f = 1, HEADER_WINDOW_ARGS do WINDOW_AT[RECORD_FIELDS.header_window[f]] = f - 1 end
local PERIOD, INTERVAL = WINDOW_AT.period_sec, WINDOW_AT.interval_sec
local CREATED, ORIGIN = WINDOW_AT.created_ms, WINDOW_AT.origin_sec
if not (PERIOD and INTERVAL and CREATED and ORIGIN) then error('args: RECORD_FIELDS.header_window lacks a window field') end

local function number_at(args, index, what)
  local value = tonumber(args[index])
  if value == nil then bad_args(what .. ' (args[' .. index .. ']) is not a number: ' .. tostring(args[index])) end
  return value
end

-- Numbers a board's calls repeat from call to call (window and record counts, budgets, limits), by
-- their text: looking up an interned string costs a small part of what tonumber's parse does (each
-- parse is over a thousand instructions). Not for values that change with each call (now). Bounded:
-- emptied when it holds NUMBER_MEMO_MAX texts.
local NUMBER_MEMO_MAX = 1024
local number_memo, number_memo_size = {}, 0

-- Hot callers look number_memo up first, and call memo_number on a miss only (a call costs more than the lookup).
local function memo_number(text)
  local value = number_memo[text]
  if value ~= nil or text == nil then return value end
  value = tonumber(text)
  if value == nil then return nil end
  if number_memo_size >= NUMBER_MEMO_MAX then number_memo, number_memo_size = {}, 0 end
  number_memo[text], number_memo_size = value, number_memo_size + 1
  return value
end

-- Parsed windows by config version: a board's calls send the same window arguments call after call,
-- and a library's top-level locals live from call to call (until the next load on that node), so
-- they are parsed once and, after that, only compared with the raw arguments they came from (Lua
-- interns strings: one pointer comparison each), which costs far less than tonumber and a table
-- per window. Correct whatever the versions are: any difference re-parses. Bounded: emptied when it
-- holds WINDOW_CACHE_MAX versions. The windows tables are shared by every call that hits: read-only.
local WINDOW_CACHE_MAX = 256
local window_cache = {}
local window_cache_size = 0

local function parse_windows(args, window_count)
  local tonumber = tonumber
  local windows, raw = {}, {}
  for w = 1, window_count do
    local at = FIRST_WINDOW_ARG + HEADER_WINDOW_ARGS * (w - 1)
    local period, interval = tonumber(args[at + PERIOD]), tonumber(args[at + INTERVAL])
    local created, origin = tonumber(args[at + CREATED]), tonumber(args[at + ORIGIN])
    if not (period and interval and created and origin) then
      number_at(args, at + PERIOD, 'window period')
      number_at(args, at + INTERVAL, 'window interval')
      number_at(args, at + CREATED, 'window creation time')
      number_at(args, at + ORIGIN, 'window slot origin')
    end
    windows[w] = { period_sec = period, interval_sec = interval, created_ms = created, origin_sec = origin }
    for i = 0, HEADER_WINDOW_ARGS - 1 do raw[#raw + 1] = args[at + i] end
  end
  return windows, raw
end

local function cached_windows(args, window_count)
  local version = args[1]
  local cached = window_cache[version]
  if cached then
    local raw, i, width = cached.raw, 1, HEADER_WINDOW_ARGS * window_count
    if #raw == width then
      while i <= width and raw[i] == args[FIRST_WINDOW_ARG - 1 + i] do i = i + 1 end
      if i > width then return cached.windows end
    end
  end
  local windows, raw = parse_windows(args, window_count)
  if not cached then
    if window_cache_size >= WINDOW_CACHE_MAX then window_cache, window_cache_size = {}, 0 end
    window_cache_size = window_cache_size + 1
  end
  window_cache[version] = { raw = raw, windows = windows }
  return windows
end

-- The header read_header fills: one table for every call, so a call builds none (a function reads its
-- header first and keeps what it needs; the next read_header overwrites it).
local HEADER = { version = '', now_ms = 0, now_sec = 0, budget = 0, window_count = 0, windows = {} }
-- The windows of a call on none (shared like cached_windows' tables: read-only).
local NO_WINDOWS = {}

-- The common header as a named table, and the index of the first argument after it:
--   { version, now_ms, now_sec, budget, window_count,
--     windows = { { period_sec, interval_sec, created_ms, origin_sec }, ... } }
-- Both tables are shared (HEADER, cached_windows): valid until the next read_header, never changed.
-- `raw_windows`: the caller binds its windows' rules itself (bind_rules, through call_state.bind_windows),
-- so they are not parsed here: windows is nil (window_count is set).
local function read_header(args, raw_windows)
  local window_text, budget_text = args[4], args[3]
  local window_count = number_memo[window_text] or memo_number(window_text)
  local budget = number_memo[budget_text] or memo_number(budget_text)
  local now_ms = tonumber(args[2])
  if not (window_count and now_ms and budget) then
    number_at(args, 4, 'window count')
    number_at(args, 2, 'now')
    number_at(args, 3, 'budget')
  end
  if #args < FIRST_WINDOW_ARG - 1 + HEADER_WINDOW_ARGS * window_count then
    bad_args('header names ' .. window_count .. ' windows but has ' .. #args .. ' args')
  end
  local header = HEADER
  header.version, header.now_ms, header.budget, header.window_count = args[1], now_ms, budget, window_count
  -- math.floor(now_ms / 1000) without two table lookups and a call (Lua's % floors: exact for any number).
  header.now_sec = (now_ms - now_ms % 1000) / 1000
  if raw_windows then
    header.windows = nil
  else
    header.windows = window_count == 0 and NO_WINDOWS or cached_windows(args, window_count)
  end
  return header, FIRST_WINDOW_ARG + HEADER_WINDOW_ARGS * window_count
end

-- The header's window rules, by name, into the record `windows` of a caller that keeps it from call to
-- call (call_state.bind_windows'): its lists period_sec, interval_sec, created_ms and origin_sec, by
-- 0-based window, each text parsed once (memo_number). Refilled only when the call's window arguments
-- differ from the texts they came from (`rule_texts`, of `rule_count` windows: the reader's fields): a
-- board's calls send the same texts call after call, and Lua interns strings (one pointer comparison
-- each). For the hot path: read_header leaves the windows to it (raw_windows).
local function bind_rules(args, window_count, windows)
  local texts, width, before = windows.rule_texts, HEADER_WINDOW_ARGS * window_count, FIRST_WINDOW_ARG - 1
  if window_count == windows.rule_count then
    local i = 1
    while i <= width and texts[i] == args[before + i] do i = i + 1 end
    if i > width then return end
  end
  -- Unbound till filled: a bad argument (parse_windows names it) leaves no half-filled rules bound.
  windows.rule_count = nil
  local periods, intervals, created, origins = windows.period_sec, windows.interval_sec, windows.created_ms, windows.origin_sec
  for w = 0, window_count - 1 do
    local at = FIRST_WINDOW_ARG + HEADER_WINDOW_ARGS * w
    periods[w], intervals[w] = memo_number(args[at + PERIOD]), memo_number(args[at + INTERVAL])
    created[w], origins[w] = memo_number(args[at + CREATED]), memo_number(args[at + ORIGIN])
    if not (periods[w] and intervals[w] and created[w] and origins[w]) then parse_windows(args, w + 1) end
  end
  for i = 1, width do texts[i] = args[before + i] end
  windows.rule_count = window_count
end

-- Records from args[first]: a count, then `count` rows of #fields values each, read into tables named
-- by `fields` (values stay strings: the function converts what it uses). Returns the rows and the index
-- of the first argument after them.
local function read_records(args, first, fields)
  if not fields then bad_args('no record shape') end
  local count = number_at(args, first, 'record count')
  local width = #fields
  if #args < first + count * width then
    bad_args(count .. ' records of ' .. width .. ' fields need ' .. count * width .. ' args from ' .. first + 1)
  end
  local rows = {}
  local at = first + 1
  for r = 1, count do
    local row = {}
    for f = 1, width do
      row[fields[f]] = args[at]
      at = at + 1
    end
    rows[r] = row
  end
  return rows, at
end

-- A named call (CALLS.<handler>, emitted from the function's contract in TypeScript): its header, then
-- its own arguments as a table by the contract's names (strings: the function converts what it uses),
-- filled by the contract's `fill` (the names written out by function-library.ts), and the index of
-- the first argument after them (a contract's records, `rest`, start there). The count must match: an argument TypeScript added or left out is a caller bug named here. The
-- table is the contract's own, refilled by each call (as HEADER is): a call builds none, and keeps
-- nothing of it past its end.
local function read_call(args, call)
  local header, at = read_header(args, call.raw_windows)
  local names = call.args
  local count = #names
  -- A contract with records (`rest`) takes them after its names: at least a count.
  local arg_count = #args
  if (call.rest and arg_count < at + count) or (not call.rest and arg_count ~= at - 1 + count) then
    bad_args(call.name .. ' takes ' .. count .. ' args after the header (' .. table.concat(names, ', ') .. '), got ' .. (#args - at + 1))
  end
  local named = call.named_args
  if not named then
    named = {}
    call.named_args = named
  end
  call.fill(named, args, at)
  return header, named, at + count
end

-- The records after a named call's arguments (`first`: read_call's third answer) of the shape `fields`
-- (RECORD_FIELDS), without a table per row: answers their count, each row then read into a table of the
-- caller's (reused from row to row) by fill_record. The count must match the arguments.
local function record_count(args, first, fields)
  if not fields then bad_args('no record shape') end
  local count_text = args[first]
  local count = number_memo[count_text] or memo_number(count_text) or number_at(args, first, 'record count')
  if #args ~= first + count * #fields then
    bad_args(count .. ' records of ' .. #fields .. ' fields need ' .. count * #fields .. ' args from ' .. first + 1)
  end
  return count
end

-- Row `r` (1-based) of the records from args[first] (record_count) into `row`, by the names of `fields`.
local function fill_record(row, args, first, fields, r)
  local width = #fields
  local at = first + 1 + (r - 1) * width
  for f = 1, width do row[fields[f]] = args[at + f - 1] end
  return row
end

-- Row `r`'s values at the offsets `a`, `b` and `c` (field_offsets; `c` nil: none) of the records of
-- `width` fields from args[first] (record_count): a hot path's read of a few fields without a table.
local function record_values(args, first, width, r, a, b, c)
  local at = first + 1 + (r - 1) * width
  return args[at + a], args[at + b], c and args[at + c]
end

-- Each field's offset in a record of the shape `fields` (RECORD_FIELDS): { name = 0-based offset }, for
-- a hot path that reads or writes a record by index, at the places its contract's names give.
local function field_offsets(fields)
  local offsets = {}
  for f = 1, #fields do offsets[fields[f]] = f - 1 end
  return offsets
end

-- Keys a call keeps for its own work across several of its steps (moderation_lib's set of a write's exceptions,
-- which every window's count intersects, and each window's intersection), unlinked as it answers: `keys` (a
-- list), `held` (key -> true). A call failing before it answers leaves them: call_lib's begin_call forgets the
-- list (forget_kept), and their keeper stores them afresh at its next first use.
local KEPT = { keys = {}, held = {} }

-- Keeps `key` till the call answers; false when the call keeps it already.
local function keep_till_answer(key)
  if KEPT.held[key] then return false end
  KEPT.held[key] = true
  KEPT.keys[#KEPT.keys + 1] = key
  return true
end

local function forget_kept()
  if #KEPT.keys > 0 then KEPT.keys, KEPT.held = {}, {} end
end

-- The reply of a named call: `named`'s fields in the order of the contract's reply names (its `pack`), which
-- TypeScript decodes by the same names (NamedReply in src/redis/replies.ts). A field left nil is a bug
-- in the function, named here rather than decoded as a shorter reply. The reply is the contract's own
-- table, refilled by each call: Redis converts a function's reply as it returns, before any other call.
-- `records` (optional): a list whose first #call.reply entries are left for the fields, records after
-- them (NamedReply.withRecords): one flat reply, as a nested list costs Redis a deferred length and
-- its type checks to send. The keys the call kept (keep_till_answer) go first.
local function answer(call, named, records)
  if #KEPT.keys > 0 then
    -- Forgotten first: a DEL that fails leaves no list for a later call to try again.
    local kept = KEPT.keys
    forget_kept()
    -- UNLINK: a kept key of many members is freed off Redis' main thread.
    redis.call('UNLINK', unpack(kept))
  end
  local reply = records or call.reply_table
  if not reply then
    reply = {}
    call.reply_table = reply
  end
  local missing = call.pack(reply, named)
  if missing then return error({ err = 'TB_BAD_REPLY ' .. call.name .. ' answered no ' .. missing }) end
  return reply
end

-- Appends `named`'s fields in the order of `fields` (a record shape, RECORD_FIELDS) to `list`, and
-- answers `list`: a record inside a reply, which TypeScript reads by the same names. A field left nil
-- is a bug in the function, named here.
local function record_of(fields, named, list)
  local n = #list
  for f = 1, #fields do
    local value = named[fields[f]]
    if value == nil then return error({ err = 'TB_BAD_REPLY a record answered no ' .. fields[f] }) end
    list[n + f] = value
  end
  return list
end

reader.read_header = read_header
-- The header read_header filled last: in a call, that call's (its handler reads it first).
reader.HEADER = HEADER
reader.bind_rules = bind_rules
reader.record_of = record_of
reader.read_records = read_records
reader.read_call = read_call
reader.record_count = record_count
reader.fill_record = fill_record
reader.answer = answer
reader.keep_till_answer = keep_till_answer
reader.forget_kept = forget_kept
reader.memo_number = memo_number
reader.field_offsets = field_offsets
reader.record_values = record_values
