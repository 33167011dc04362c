-- module: archive_shown
-- requires: archive
-- archive_shown_lib: the exception positions kept per archived period (<base>archshown, archive_lib's
-- keys) that a one-shard board's moderated archive page reads (archive_read.lua) and a moderation
-- change moves (snapshot_shown_lib), a module of the function libraries on boards beside archive_lib,
-- which takes the archives.
-- KEYS: 0

-- The separators of an archive's rows text (archive_lib's, snapshot_lib's format).
local SNAP_ROW, SNAP_FIELD = archive.SNAP_ROW, archive.SNAP_FIELD

-- The key of a window's exception positions per period (archive_read.lua), from its archive base.
local function shown_index_key(base)
  return base .. 'archshown'
end

-- Stores the exception positions of the archive of `at`, expiring with the window's archives (a
-- segment's: snapshot_lib's index expires).
local function shown_index_set(base, at, entry)
  redis.call('HSET', base .. 'archshown', at, entry)
  local ttl_ms = redis.call('PTTL', base .. 'snaps')
  if ttl_ms > 0 then redis.call('PEXPIRE', base .. 'archshown', ttl_ms) end
end

-- Drops the exception positions of periods no longer kept (`kept`: the starts kept), so the hash
-- holds at most one field per kept period.
local function shown_index_pruned(base, kept)
  if redis.call('HLEN', base .. 'archshown') <= #kept then return end
  local keeping, gone = {}, {}
  for _, at in ipairs(kept) do keeping[tostring(at)] = true end
  for _, at in ipairs(redis.call('HKEYS', base .. 'archshown')) do
    if not keeping[at] then gone[#gone + 1] = at end
  end
  if #gone > 0 then redis.call('HDEL', base .. 'archshown', unpack(gone)) end
end

-- The exception positions of a period (archive_read.lua) are kept as "<stamp> <text bytes> <rows
-- scanned> <next byte> <position>,...". A plain find of one id in a period's text costs about 1 /
-- FIND_SHARE of a pass over its rows.
local FIND_SHARE = 50

-- The exceptions (their mode, `only`: a review board's allowed items; else hidden ones) as one stamp:
-- their items in byte order ("2": the entry's format, so an entry of another format is never read as
-- this one's).
local function exceptions_stamp(only, list)
  local items = {}
  for i, item in ipairs(list) do items[i] = item end
  table.sort(items)
  return redis.sha1hex('2' .. (only and 'only' or 'out') .. SNAP_ROW .. table.concat(items, SNAP_ROW))
end

-- A kept entry as { stamp, bytes, scanned, next_byte, found (sorted positions) }; nil when none.
local function entry_read(entry)
  if not entry then return nil end
  local stamp, bytes, scanned, next_byte, list = string.match(entry, '^(%x+) (%d+) (%d+) (%d+) ?(.*)$')
  if not stamp then return nil end
  local found = {}
  for position in string.gmatch(list, '%d+') do found[#found + 1] = tonumber(position) end
  return { stamp = stamp, bytes = tonumber(bytes), scanned = tonumber(scanned), next_byte = tonumber(next_byte), found = found }
end

-- Stores `scan` as the entry of the period at `at` for the exceptions of `stamp`.
local function entry_write(base, at, stamp, scan)
  local entry = { stamp, scan.bytes, scan.scanned, scan.next_byte, table.concat(scan.found, ',') }
  shown_index_set(base, at, table.concat(entry, ' '))
end

-- The stored position of `item`'s row in a positioned text (one plain find), or nil when not listed.
local function position_of(rows, item)
  local mark = SNAP_ROW .. item .. SNAP_FIELD
  local at = string.find(rows, mark, 1, true)
  if not at then return nil end
  local rest = string.match(rows, '^[^' .. SNAP_ROW .. ']*', at + #mark)
  return tonumber(string.match(rest, SNAP_FIELD .. '(%d+)$'))
end

-- How many of the sorted `positions` are below `position` (binary search).
local function count_below(positions, position)
  local low, high = 0, #positions
  while low < high do
    local middle = math.floor((low + high + 1) / 2)
    if positions[middle] < position then low = middle else high = middle - 1 end
  end
  return low
end

archive_shown.index_key = shown_index_key
archive_shown.index_set = shown_index_set
archive_shown.index_pruned = shown_index_pruned
archive_shown.FIND_SHARE = FIND_SHARE
archive_shown.exceptions_stamp = exceptions_stamp
archive_shown.entry_read = entry_read
archive_shown.entry_write = entry_write
archive_shown.position_of = position_of
archive_shown.count_below = count_below
