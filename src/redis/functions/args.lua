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
--   args[5 .. 4+3W]  per window: period (s), interval (s), creation time (unix ms)
-- Per-request data follows as records: a count, then that many rows of the fields the library
-- declared for it (RECORD_FIELDS, emitted by function-library.ts), read into named tables.

-- A bad argument is a caller bug: the error names what was wrong instead of a Lua "attempt to
-- perform arithmetic on a nil value" with a line number.
local function bad_args(what)
  return error({ err = 'TB_BAD_ARGS ' .. what })
end

local function number_at(args, index, what)
  local value = tonumber(args[index])
  if value == nil then bad_args(what .. ' (args[' .. index .. ']) is not a number: ' .. tostring(args[index])) end
  return value
end

-- The common header as a named table, and the index of the first argument after it:
--   { version, now_ms, now_sec, budget, windows = { { period_sec, interval_sec, created_ms }, ... } }
-- It runs on every call, so the common path is plain tonumber calls (a local: a library's top level
-- cannot read globals at load time, so it is taken per call) and number_at only names a bad argument.
local function read_header(args)
  local tonumber = tonumber
  local window_count, now_ms, budget = tonumber(args[4]), tonumber(args[2]), tonumber(args[3])
  if not (window_count and now_ms and budget) then
    number_at(args, 4, 'window count')
    number_at(args, 2, 'now')
    number_at(args, 3, 'budget')
  end
  if #args < 4 + 3 * window_count then
    bad_args('header names ' .. window_count .. ' windows but has ' .. #args .. ' args')
  end
  local windows = {}
  for w = 1, window_count do
    local at = 2 + 3 * w
    local period, interval, created = tonumber(args[at]), tonumber(args[at + 1]), tonumber(args[at + 2])
    if not (period and interval and created) then
      number_at(args, at, 'window period')
      number_at(args, at + 1, 'window interval')
      number_at(args, at + 2, 'window creation time')
    end
    windows[w] = { period_sec = period, interval_sec = interval, created_ms = created }
  end
  return {
    version = args[1],
    now_ms = now_ms,
    now_sec = math.floor(now_ms / 1000),
    budget = budget,
    windows = windows,
  }, 5 + 3 * window_count
end

-- Records from args[first]: a count, then `count` rows of #fields values each, read into tables named
-- by `fields` (values stay strings: the function converts what it uses). Returns the rows and the index
-- of the first argument after them.
local function read_records(args, first, fields)
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
