-- module: archive
-- requires: aggregate, archive_held, hooks, keyspace, order, tiebreak
-- archive_lib: a calendar window's archive taken in bounded chunks (the option calendar), a module of
-- the function libraries on boards; window_lib's expiry drives it through the hook slots_draining.
-- KEYS: 0
-- A calendar window holds one slot per period, and a closed period's slot no longer changes (an event
-- stamped in a closed period is refused), so it holds the period's final standings exactly. The first
-- call in a new period (snapshot_lib's cross_boundary) only marks the closed slot as pending; the
-- expiry that drains it, EXPIRE_CHUNK fields a call, also keeps the fields it drains, and once the slot
-- is gone all but the best `top` are dropped and the rows written out, again at most a budget of rows
-- a call. (Dropping only then keeps an item retracted mid-drain exact: the next best is still there.) Every
-- step is one script on the board's hash tag, so whichever call (write, read or scheduler, on any
-- instance) runs it next goes on where the last one stopped, and the archive is stored once.
-- Keys, siblings of the window's slots key:
--   <base>arch           hash   closed slot start (unix s) -> "<top> <keep> <rows written> <expire s>":
--                               pending archives (expire s: a segment's archive lives that long, 0: kept
--                               until `keep` newer ones replace it)
--   <base>archrows:<at>  zset   item -> score: the rows of the slot drained so far (its best `top` once
--                               the slot is gone)
--   <base>snap:<at>      string the archive's rows (snapshot_lib's format), visible once in <base>snaps
--   <base>archshown      hash   period start -> the exception positions a one-shard board's moderated
--                               page reads (archive_read.lua, archive_shown_lib): at most one field per
--                               kept period; a moderation change moves the newest (snapshot_shown_lib's
--                               index_change_end)
--   <base>archidx:<at>   hash   on a board of several metrics, the archive's record: item -> "<score>"
--                               (tiebreak board: "<score>\31<mark>") of each row written, so another
--                               metric's rows find their items' counts here (listing_counts) without
--                               scanning the text; one field per row, as many as the text holds
--   <base>archheld, <base>archpend   on a `groups: true` board: which items the archives hold (archive_held_lib)
-- On a tiebreak board <base>archrows:<at> holds, all scored 0, each drained item's member of the pair
-- order (tiebreak_lib's member_of: its byte order the board's pair order, with a `ties: first` board's
-- tie mark, who reached the pair first, which no slot value holds), trimmed to the best `top` and
-- written out with their marks as snapshots are; each chunk adds its rows' ranks to
-- <base>archrank:<at> (zset, item -> rank key), the previous listing once complete.

local SNAP_ROW = '\30'
local SNAP_FIELD = '\31'

-- The most rows a snapshot's listing holds (snapshots.limits.ts SNAPSHOT_TOP_ITEMS.max; its spec checks
-- they agree).
local LISTING_ROWS = 1000

-- Rows' positions as text, written once as the library loads: Lua writes a number's text with a sprintf,
-- 2 M instructions of a crossing that wrote the positions of 1 000 rows afresh (issue #45). (`'' .. n`
-- is tostring's text: a library's load reaches no global function.)
local POSITION_TEXTS = {}
for n = 1, LISTING_ROWS do POSITION_TEXTS[n] = '' .. n end

local function archive_base(slots_key)
  return keyspace.sibling_key(slots_key, 'slots', '')
end

-- Marks the closed slot starting at `slot_start` as pending: nothing is read yet. A slot that was
-- never written (nothing scored in that period) has no standings to keep. `expire_sec` > 0: the
-- archive's keys expire that long after it is complete (a segment's).
local function archive_begin(slots_key, slot_start, conf, expire_sec)
  if not redis.call('ZSCORE', slots_key, slot_start) then return end
  local base = archive_base(slots_key)
  redis.call('UNLINK', base .. 'archrows:' .. slot_start, base .. 'archrank:' .. slot_start, base .. 'snap:' .. slot_start)
  redis.call('HDEL', base .. 'archshown', slot_start)
  redis.call('UNLINK', base .. 'archidx:' .. slot_start)
  redis.call('HSET', base .. 'arch', slot_start, conf.top .. ' ' .. conf.keep .. ' 0 ' .. expire_sec)
end

-- The results of the window of `slots_key` when its board keeps pairs (tiebreak_lib), else nil.
local function pairs_top(slots_key)
  local top_key = keyspace.sibling_key(slots_key, 'slots', 'top')
  return tiebreak.keeps_pairs(top_key) and top_key or nil
end

-- The pending archives of a window (slot start -> { top, keep, written }), or nil when none is.
local function archives_pending(slots_key)
  local stored = redis.call('HGETALL', archive_base(slots_key) .. 'arch')
  if #stored == 0 then return nil end
  local pending = {}
  for i = 1, #stored, 2 do
    local top, keep, written, expire = string.match(stored[i + 1], '^(%d+) (%d+) (%d+) ?(%d*)$')
    pending[stored[i]] =
      { top = tonumber(top), keep = tonumber(keep), written = tonumber(written), expire_sec = tonumber(expire) or 0 }
  end
  return pending
end

-- The text of the archive of the period starting at `at` (unix s), nil when none is kept, and whether
-- that archive is still being taken (true: nil text, its rows are not all written).
local function period_rows(slots_key, at)
  local base, period = archive_base(slots_key), string.format('%d', at)
  if redis.call('HEXISTS', base .. 'arch', period) == 1 then return nil, true end
  if not redis.call('ZSCORE', base .. 'snaps', period) then return nil, false end
  return redis.call('GET', base .. 'snap:' .. period) or nil, false
end

-- A slot value's score as Redis stored it (a string: a Lua number would print 14 digits).
local function archive_score(value)
  if aggregate.mode() == 'last' then return string.match(value, ':(-?%d+)$') end
  return value
end

-- A tiebreak board's archive_take: each drained item's member of the pair order (tiebreak_lib's
-- member_of, from the pair its slot value holds: "<score>,<tiebreak>", on last "<ms>:<score>,<tiebreak>").
local function archive_take_pairs(top_key, rows_key, entries)
  local args = {}
  for i = 1, #entries, 2 do
    local score, tb = string.match(entries[i + 1], '(-?%d+),(-?%d+)$')
    args[#args + 1], args[#args + 2] = 0, tiebreak.member_of(top_key, entries[i], tonumber(score), tonumber(tb))
  end
  if #args > 0 then redis.call('ZADD', rows_key, unpack(args)) end
end

-- Keeps `entries` (item, value pairs) drained from the slot starting at `slot_start` that scored.
local function archive_take(slots_key, pending, slot_start, entries)
  local state = pending[slot_start]
  if not state then return end
  local rows_key = archive_base(slots_key) .. 'archrows:' .. slot_start
  local top_key, items = pairs_top(slots_key), {}
  if top_key then
    archive_take_pairs(top_key, rows_key, entries)
    for i = 1, #entries, 2 do items[#items + 1] = entries[i] end
  else
    local args = {}
    for i = 1, #entries, 2 do
      local score = archive_score(entries[i + 1])
      if aggregate.mode() ~= 'sum' or tonumber(score) > 0 then
        args[#args + 1], args[#args + 2] = score, entries[i]
        items[#items + 1] = entries[i]
      end
    end
    if #args > 0 then redis.call('ZADD', rows_key, unpack(args)) end
  end
  if archive_held.tracked(slots_key, state) then archive_held.pending_moved(slots_key, items, true) end
end

-- The items of display positions `first` .. `last` of a pending archive's rows `rows_key`.
local function items_at(rows_key, first, last, top_key)
  local items = {}
  if top_key then
    for i, row in ipairs(tiebreak.pair_rows(top_key, rows_key, first, last)) do items[i] = row.item end
    return items
  end
  local page = order.score_page(rows_key, first, last)
  for i = 1, #page, 2 do items[#items + 1] = page[i] end
  return items
end

-- Drops, at most `budget` at a time, the rows of a drained slot beyond its best `top`: in ZREVRANGE's
-- order (score, then id, descending; ZRANGE's on an `order: asc` board), those a full listing would
-- have put after the first `top`.
-- Returns the budget left and whether rows remain to drop.
local function archive_trim(slots_key, rows_key, state, budget)
  local extra = redis.call('ZCARD', rows_key) - state.top
  if extra <= 0 then return budget, false end
  local dropped = math.min(extra, budget)
  -- The rows dropped are the last `dropped` ones in the listing's order.
  local last = state.top + extra - 1
  local trimmed = archive_held.tracked(slots_key, state) and items_at(rows_key, last - dropped + 1, last, pairs_top(slots_key))
  if order.ascending(rows_key) then
    redis.call('ZREMRANGEBYRANK', rows_key, -dropped, -1)
  else
    redis.call('ZREMRANGEBYRANK', rows_key, 0, dropped - 1)
  end
  if trimmed then archive_held.pending_left(slots_key, trimmed) end
  return budget - dropped, dropped < extra
end

-- The archive of `at` is complete: it becomes visible (its index entry), the oldest beyond `keep`
-- go, and its rows become the previous listing (previousRank).
local function archive_finish(slots_key, base, at, state, top_key)
  local index = base .. 'snaps'
  if state.written > 0 then
    local dropped = redis.call('ZRANGE', index, 0, -state.keep)
    for _, old in ipairs(dropped) do
      redis.call('UNLINK', base .. 'snap:' .. old, base .. 'archidx:' .. old)
      redis.call('ZREM', index, old)
    end
    redis.call('ZADD', index, at, at)
    if #dropped > 0 and archive_held.tracked(slots_key, state) then
      archive_held.held_dropped(slots_key, redis.call('ZRANGE', index, 0, 0)[1])
    end
    if top_key then
      redis.call('UNLINK', base .. 'prev', base .. 'archrows:' .. at)
      redis.call('RENAME', base .. 'archrank:' .. at, base .. 'prev')
    else
      redis.call('UNLINK', base .. 'prev')
      redis.call('RENAME', base .. 'archrows:' .. at, base .. 'prev')
    end
    if state.expire_sec > 0 then
      -- When its text expires (set as its first rows were written, archive_write).
      local until_ms = redis.call('PEXPIRETIME', base .. 'snap:' .. at)
      for _, key in ipairs({ index, base .. 'prev', base .. 'archidx:' .. at }) do
        redis.call('PEXPIREAT', key, until_ms)
      end
    end
  end
  redis.call('HDEL', base .. 'arch', at)
end

-- A tiebreak board's archive rows from position `written` (0-based) of its members `rows_key`, at most
-- `budget`, with their marks; each row's rank on the pair (strict: its position; negated unless the
-- board is `order: asc`) added to `ranks_key`, the next previous listing (snapshot_lib's `prev`). The
-- row before the first tells whether the first shares its pair, and so its rank.
local function pair_archive_rows(top_key, rows_key, ranks_key, written, budget)
  local rows, ranked = tiebreak.listing_rows(top_key, rows_key, written, written + budget - 1, SNAP_ROW, SNAP_FIELD,
    function(item) return math.abs(tonumber(redis.call('ZSCORE', ranks_key, item))) end)
  if #ranked > 0 then redis.call('ZADD', ranks_key, unpack(ranked)) end
  return rows
end

-- The archive rows from position `written` of `rows_key`, at most `budget`, in snapshot_lib's format
-- (`top_key`: a tiebreak board's results, whose rows carry their marks: pair_archive_rows).
local function archive_rows(rows_key, written, budget, top_key, ranks_key)
  if top_key then return pair_archive_rows(top_key, rows_key, ranks_key, written, budget) end
  local rows = {}
  local page = order.score_page(rows_key, written, written + budget - 1)
  for i = 1, #page, 2 do
    local n = written + #rows + 1
    rows[#rows + 1] = SNAP_ROW .. page[i] .. SNAP_FIELD .. page[i + 1] .. SNAP_FIELD .. (POSITION_TEXTS[n] or n)
  end
  return rows
end

-- On a board of several metrics, adds the rows just written (snapshot_lib's format) to the archive's
-- record `record_key` (item -> score, "<score>\31<mark>" on a tiebreak board). An archive begun before
-- records were kept gets none (`first`: its first rows): a partial record would answer wrong counts.
local function record_rows(slots_key, record_key, rows, first)
  if #rows == 0 then return end
  local metrics = redis.call('HGET', archive_held.cfg_of(slots_key), 'metrics')
  if not metrics or not string.find(metrics, ',', 1, true) then return end
  if not first and redis.call('EXISTS', record_key) == 0 then return end
  local fields = {}
  for _, row in ipairs(rows) do
    local item, value = string.match(row, '^' .. SNAP_ROW .. '([^' .. SNAP_FIELD .. ']*)' .. SNAP_FIELD .. '(.*)' .. SNAP_FIELD .. '%d+$')
    fields[#fields + 1], fields[#fields + 2] = item, value
  end
  redis.call('HSET', record_key, unpack(fields))
end

-- Forgets, in the record of the archive whose text is `text_key` ("<base>snap:<at>"), the items of
-- `rows` (snapshot_lib's format) that leave its text (a retraction's item, a sharded board's cut), so
-- another metric's rows no longer find them (listing_counts); a snapshot keeps no record. One HDEL.
local function record_forget(text_key, rows)
  local record_key = string.gsub(text_key, 'snap:(%d+)$', 'archidx:%1')
  if record_key == text_key or redis.call('EXISTS', record_key) == 0 then return end
  local items = {}
  for item in string.gmatch(rows, SNAP_ROW .. '([^' .. SNAP_FIELD .. ']*)') do items[#items + 1] = item end
  if #items > 0 then redis.call('HDEL', record_key, unpack(items)) end
end

-- Appends `rows` (snapshot_lib's format) to the text `text_key` of the pending archive of `at` (`state`)
-- of the window of `slots_key`, and tells archive_held their items: a segment's text expires `expire s`
-- from its first rows on (Redis' clock; the archive's other keys with it once complete), so its rows
-- are held exactly that long.
local function rows_written(slots_key, text_key, rows, state, at)
  if #rows == 0 then return end
  redis.call('APPEND', text_key, table.concat(rows))
  if state.expire_sec > 0 then redis.call('EXPIRE', text_key, state.expire_sec, 'NX') end
  local tracked = archive_held.tracked(slots_key, state)
  if not tracked and (state.expire_sec == 0 or not archive_held.keeps_groups(slots_key)) then return end
  local items = {}
  for i, row in ipairs(rows) do items[i] = string.match(row, '^' .. SNAP_ROW .. '([^' .. SNAP_FIELD .. ']*)') end
  if tracked then return archive_held.rows_held(slots_key, at, items) end
  archive_held.segment_rows_held(slots_key, text_key, items)
end

-- Writes out, oldest first, the pending archives whose slot is drained, at most `budget` rows.
-- Returns the budget left and whether rows remain.
local function archive_write(slots_key, pending, budget)
  local base, top_key = archive_base(slots_key), pairs_top(slots_key)
  local starts = {}
  for at in pairs(pending) do starts[#starts + 1] = at end
  table.sort(starts, function(a, b) return tonumber(a) < tonumber(b) end)
  for _, at in ipairs(starts) do
    if redis.call('ZSCORE', slots_key, at) then return budget, false end
    if budget <= 0 then return 0, true end
    local state = pending[at]
    if state.written == 0 then
      local trimming
      budget, trimming = archive_trim(slots_key, base .. 'archrows:' .. at, state, budget)
      if trimming or budget <= 0 then return budget, true end
    end
    local rows = archive_rows(base .. 'archrows:' .. at, state.written, budget, top_key, base .. 'archrank:' .. at)
    rows_written(slots_key, base .. 'snap:' .. at, rows, state, at)
    record_rows(slots_key, base .. 'archidx:' .. at, rows, state.written == 0)
    state.written = state.written + #rows
    budget = budget - math.max(#rows, 1)
    if state.written >= redis.call('ZCARD', base .. 'archrows:' .. at) then
      archive_finish(slots_key, base, at, state, top_key)
    else
      redis.call('HSET', base .. 'arch', at, table.concat({ state.top, state.keep, state.written, state.expire_sec }, ' '))
      return budget, true
    end
  end
  return budget, false
end

-- The byte where the last row of `rows` (a kept listing's text, or a page of one) starts; nil when it
-- holds none. Found from the end, a row being at most an id and a score long: no pass over the rows.
local function last_row_at(rows)
  local last, from = nil, #rows
  while not last and from > 1 do
    from = math.max(1, from - 512)
    last = string.find(rows, SNAP_ROW, from, true)
  end
  while last do
    local following = string.find(rows, SNAP_ROW, last + 1, true)
    if not following then break end
    last = following
  end
  return last
end

-- The last row of a page of a kept listing's text, as stored: the seam a read of the text in several
-- calls (history_read, archive_read) hands to its next call, which goes on only while the text still
-- holds that row where the page ended. A rewrite between the calls (a retraction, a cut, a group's row
-- moved, which may keep the text's length) moves or changes the rows up to it: a row lost or repeated.
local function seam_of(page)
  return string.sub(page, last_row_at(page) or 1)
end

-- Forgets a window's pending archives (a remade or reconfigured window, a deleted board).
local function drop_archives(base)
  for _, at in ipairs(redis.call('HKEYS', base .. 'arch')) do
    redis.call('UNLINK', base .. 'archrows:' .. at, base .. 'archrank:' .. at, base .. 'snap:' .. at, base .. 'archidx:' .. at)
  end
  redis.call('UNLINK', base .. 'arch', base .. 'archshown')
  archive_held.dropped(base)
end

-- Hook slots_draining: a calendar window's (origin_sec > 0) pending archives take what its expiry
-- drains, then write their rows within the budget left (a rolling window has none: nil).
local function archive_drain(slots_key, origin_sec)
  if (origin_sec or 0) == 0 then return nil end
  local pending = archives_pending(slots_key)
  if not pending then return nil end
  return {
    take = function(slot_start, entries) archive_take(slots_key, pending, slot_start, entries) end,
    finish = function(budget) return archive_write(slots_key, pending, budget) end,
  }
end

hooks.register_all('calendar', { 'slots_draining', archive_drain, 'period_closed', archive_begin,
  'history_dropped', drop_archives })

hooks.export_all(archive, { 'archives_pending', archives_pending, 'period_rows', period_rows,
  'record_forget', record_forget, 'last_row_at', last_row_at, 'seam_of', seam_of, 'SNAP_ROW', SNAP_ROW, 'SNAP_FIELD', SNAP_FIELD, 'POSITION_TEXTS', POSITION_TEXTS })
