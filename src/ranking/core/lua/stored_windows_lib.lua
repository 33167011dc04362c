-- module: stored_windows
-- stored_windows_lib: a board config's windows as its field `windows` holds them. Redis keeps a hash
-- as a listpack only while every value fits hash-max-listpack-value (64 bytes by default); one longer
-- value makes the whole config a hash table, about 770 bytes more per board shard at rest. So plain
-- windows (a name, period, interval and creation time, nothing else: most boards') are kept as text,
-- "<name> <periodSec> <intervalSec> <createdAtMs>" per window joined by ',', where a window created in
-- the same ms as the one before it leaves its time out: "1h 3600 300 1796290397607,day 86400 3600".
-- A list holding any other window (snapshots, a calendar, all time) is kept as JSON, as every config
-- stored before this text was; a JSON list starts with '[' and a window name never does (names are
-- [A-Za-z0-9_.:-]), so both read.
-- KEYS: 0

local PLAIN_FIELDS = { name = true, periodSec = true, intervalSec = true, createdAtMs = true }

-- Whether window `w` has only the plain fields, each one the text can hold.
local function plain(w)
  for field, value in pairs(w) do
    if not PLAIN_FIELDS[field] then return false end
    if field == 'name' then
      if type(value) ~= 'string' or value == '' or string.find(value, '[^%w_.:-]') then return false end
    elseif type(value) ~= 'number' or value < 0 or value ~= math.floor(value) then
      return false
    end
  end
  return w.name ~= nil and w.periodSec ~= nil and w.intervalSec ~= nil and w.createdAtMs ~= nil
end

-- The `windows` field's value for the list `windows` (as cjson.decode reads a PUT's).
local function encode(windows)
  local parts, last_ms = {}, nil
  for i, w in ipairs(windows) do
    if not plain(w) then return cjson.encode(windows) end
    local text = string.format('%s %d %d', w.name, w.periodSec, w.intervalSec)
    if w.createdAtMs ~= last_ms then text = text .. string.format(' %d', w.createdAtMs) end
    parts[i], last_ms = text, w.createdAtMs
  end
  if #parts == 0 then return cjson.encode(windows) end
  return table.concat(parts, ',')
end

-- Whether a `windows` field holds the JSON form.
local function is_json(stored)
  local first = string.sub(stored, 1, 1)
  return first == '[' or first == '{'
end

-- The list of windows a `windows` field holds (either form), as cjson.decode would read its JSON.
local function decode(stored)
  if is_json(stored) then return cjson.decode(stored) end
  local windows, last_ms = {}, nil
  for text in string.gmatch(stored, '[^,]+') do
    local name, period, interval, created = string.match(text, '^(%S+) (%d+) (%d+) ?(%d*)$')
    if created ~= '' then last_ms = tonumber(created) end
    windows[#windows + 1] = { name = name, periodSec = tonumber(period), intervalSec = tonumber(interval), createdAtMs = last_ms }
  end
  return windows
end

-- The windows of the config hash `cfg_key` (an empty list: none stored).
local function windows_of(cfg_key)
  local stored = redis.call('HGET', cfg_key, 'windows')
  if not stored then return {} end
  return decode(stored)
end

-- Stores `windows` in the config hash `cfg_key`. Redis never turns a hash table back into a listpack,
-- so a hash that held the JSON form is written anew, every field at once, the windows as text: from
-- then on it is a listpack unless another of its values is over the limit too.
local function store(cfg_key, windows)
  local value = encode(windows)
  local stored = redis.call('HGET', cfg_key, 'windows')
  if stored == value then return end
  if not stored or not is_json(stored) or is_json(value) then
    redis.call('HSET', cfg_key, 'windows', value)
    return
  end
  local fields = redis.call('HGETALL', cfg_key)
  for i = 1, #fields, 2 do
    if fields[i] == 'windows' then fields[i + 1] = value end
  end
  redis.call('DEL', cfg_key)
  redis.call('HSET', cfg_key, unpack(fields))
end

stored_windows.is_json = is_json
stored_windows.encode = encode
stored_windows.store = store
stored_windows.decode = decode
stored_windows.windows_of = windows_of
