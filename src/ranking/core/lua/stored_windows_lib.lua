-- module: stored_windows
-- stored_windows_lib: the config field `windows` of a board shard's config hash, as text or JSON: how
-- it is written and read back. Every reader asks call_state (call_lib), which answers with these.
-- KEYS: 0

-- The config field `windows`. Redis keeps a hash a listpack only while each value fits
-- hash-max-listpack-value (64 bytes by default): one longer value costs a board shard about 770 bytes.
-- So plain windows (name, period, interval, creation time: most boards') are text, "<name> <periodSec>
-- <intervalSec> <createdAtMs>" joined by ',', a window created in the same ms as the one before leaving
-- its time out; any other list (snapshots, calendars, all time) is JSON, as all configs before the text.
local PLAIN_WINDOW = { name = 'string', periodSec = 'number', intervalSec = 'number', createdAtMs = 'number' }

-- Whether `stored` is the JSON form (a name, [A-Za-z0-9_.:-], never starts a JSON list).
local function windows_are_json(stored) return string.find(stored, '^[%[{]') ~= nil end

local function windows_text(windows)
  local parts, last_ms = {}, nil
  for i, w in ipairs(windows) do
    for field, value in pairs(w) do
      if PLAIN_WINDOW[field] ~= type(value) then return cjson.encode(windows) end
      if field == 'name' and not string.find(value, '^[%w_.:-]+$') or field ~= 'name' and (value < 0 or value % 1 ~= 0) then
        return cjson.encode(windows)
      end
    end
    if not (w.name and w.periodSec and w.intervalSec and w.createdAtMs) then return cjson.encode(windows) end
    local created = w.createdAtMs == last_ms and '' or string.format(' %d', w.createdAtMs)
    parts[i], last_ms = string.format('%s %d %d', w.name, w.periodSec, w.intervalSec) .. created, w.createdAtMs
  end
  return #parts > 0 and table.concat(parts, ',') or cjson.encode(windows)
end

-- The list of windows a `windows` field holds (either form; nil: none), as cjson.decode reads the JSON.
local function decode_windows(stored)
  if not stored or windows_are_json(stored) then return cjson.decode(stored or '[]') end
  local windows, last_ms = {}, nil
  for text in string.gmatch(stored, '[^,]+') do
    local name, period, interval, created = string.match(text, '^(%S+) (%d+) (%d+) ?(%d*)$')
    last_ms = created ~= '' and tonumber(created) or last_ms
    windows[#windows + 1] = { name = name, periodSec = tonumber(period), intervalSec = tonumber(interval), createdAtMs = last_ms }
  end
  return windows
end

-- Stores `windows` in the config `cfg_key`. Redis never turns a hash table back into a listpack, so a
-- config that held JSON windows is written anew, every field at once, the windows as text.
local function store_windows(cfg_key, windows)
  local value, stored = windows_text(windows), redis.call('HGET', cfg_key, 'windows')
  if stored == value then return end
  if not stored or not windows_are_json(stored) or windows_are_json(value) then return redis.call('HSET', cfg_key, 'windows', value) end
  local fields = redis.call('HGETALL', cfg_key)
  for i = 2, #fields, 2 do fields[i] = fields[i - 1] == 'windows' and value or fields[i] end
  redis.call('DEL', cfg_key)
  redis.call('HSET', cfg_key, unpack(fields))
end

stored_windows.windows_are_json = windows_are_json
stored_windows.decode_windows = decode_windows
stored_windows.store_windows = store_windows
