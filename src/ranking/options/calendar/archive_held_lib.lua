-- module: archive_held
-- requires: call_state, hooks, keyspace, stored_windows
-- archive_held_lib: which items a calendar window's archives and the rolling windows' snapshots hold
-- rows of, on a `groups: true` board (archive_lib calls it as it takes, trims, writes and drops
-- archives; snaprows' take_snapshot through the hook snapshot_taken), so groups_lib keeps an item's
-- group exactly as long as some kept listing of the shard may show a row of it: a group hidden later
-- still finds the rows of its items that left every window (issue #49).
-- KEYS: 0
-- Keys, siblings of the window's slots key:
--   <base>archheld  zset  item -> start of the newest kept archive of the window holding its row (added
--                         as rows are written; an item whose newest one is dropped leaves): at most one
--                         entry per row of the kept archives (keep x top)
--   <base>archpend  zset  item -> how many pending archives of the window hold its drained row, not yet
--                         written (taken: +1; written, trimmed or retracted: -1): at most the rows the
--                         pending archives hold (archrows)
-- Key, sibling of the config hash:
--   <tag>:histheld   zset  item -> until when (unix s, the app's clock) a rolling snapshot of the shard
--                          (a board window's or a segment's, or the previous listing taken with it) may
--                          show its row: the latest of its snapshots' ends (at + keep + 1 intervals, as
--                          history reads show a snapshot by the app's clock); entries whose end passed
--                          leave at the shard's next snapshot. At most the rows of the snapshots kept.
--   <tag>:segheld    zset  item -> when (unix ms, Redis' clock: PEXPIRETIME) the segment archive text
--                          holding its row that expires last expires, and <tag>:segtext (hash) item ->
--                          that text's key: a segment's archive text expires on Redis' clock (set as its
--                          first rows are written, archive_lib), which no script reads, so the item is
--                          held while that text exists. Entries whose text is gone leave, soonest first,
--                          as the shard's next segment archive rows are written. At most the rows of the
--                          segment archives kept (keep x top per calendar window and segment).
-- An archive a segment drops for newer ones before its text expires lets go of the items whose text
-- it was while an older segment archive of another segment holding them may still be kept (by then
-- about keep periods old, so for at most about a period).

-- The config hash of the shard of `slots_key` ("<tag>:<window>:slots", a segment's too).
local function cfg_of(slots_key)
  return string.match(slots_key, '^[^}]*}') .. ':cfg'
end

-- "<tag>:<window>:slots" -> "<tag>:<window>:"
local function base_of(slots_key)
  return keyspace.sibling_key(slots_key, 'slots', '')
end

-- Whether the board of `slots_key` keeps groups (groups_lib): its archives then keep archheld.
local function keeps_groups(slots_key)
  return redis.call('HGET', cfg_of(slots_key), 'groups') == '1'
end

-- `items` may have left every archive of the window (trimmed out of a pending one, retracted, or their
-- newest kept one dropped): the hooks archives_left are told.
local function archives_left(slots_key, items)
  if #items == 0 then return end
  for _, left in ipairs(hooks.archives_left) do left(cfg_of(slots_key), items) end
end

-- "<tag>:cfg" -> "<tag>:histheld"
local history_key = keyspace.sibling_of('cfg', 'histheld')

-- "<tag>:cfg" -> "<tag>:segheld", "<tag>:segtext"
local segment_key = keyspace.sibling_of('cfg', 'segheld')
local segment_text_key = keyspace.sibling_of('cfg', 'segtext')

-- Whether some kept listing of the shard of `cfg_key` holds a row of `item`: a snapshot not yet past
-- its end (histheld), a segment's archive Redis still keeps (segtext), a kept archive of a calendar
-- window (archheld) or one still being taken (archpend). Two commands, two more a calendar window.
local function holds(cfg_key, item)
  local until_sec = redis.call('ZSCORE', history_key(cfg_key), item)
  if until_sec and tonumber(until_sec) * 1000 > call_state.now_ms() then return true end
  local text_key = redis.call('HGET', segment_text_key(cfg_key), item)
  if text_key and redis.call('EXISTS', text_key) == 1 then return true end
  for _, w in ipairs(stored_windows.decode_windows(redis.call('HGET', cfg_key, 'windows'))) do
    local base = keyspace.sibling_key(cfg_key, 'cfg', w.name .. ':')
    if redis.call('ZSCORE', base .. 'archheld', item) or redis.call('ZSCORE', base .. 'archpend', item) then return true end
  end
  return false
end

-- Until when (unix s) a segment's snapshot or archive may still take a row of an item leaving every
-- window of the board of `cfg_key` now, or nil when none may: a segment's window drains only when the
-- segment is visited, so it may still hold the item and store its row at a boundary up to the current
-- slot, shown until keep + 1 intervals after it, on a shard with segment history (seghist) and a
-- window keeping history. A calendar window's segment archives its closed period when next visited,
-- which its mark (snapshot_lib) allows for keep + 1 of its longest periods (intervalSec).
local function segment_lag_until(cfg_key)
  if redis.call('EXISTS', keyspace.sibling_key(cfg_key, 'cfg', 'seghist')) == 0 then return nil end
  local now_sec, until_sec = math.floor(call_state.now_ms() / 1000), nil
  for _, w in ipairs(stored_windows.decode_windows(redis.call('HGET', cfg_key, 'windows'))) do
    if type(w.snapshots) == 'table' then
      local from = w.calendar and now_sec or now_sec - now_sec % w.intervalSec
      local ends = from + (w.snapshots.keep + 1) * w.intervalSec
      until_sec = math.max(until_sec or ends, ends)
    end
  end
  return until_sec
end

-- Whether the archive `state` (archive_lib's pending state) of the window of `slots_key` is tracked.
local function tracked(slots_key, state)
  return state.expire_sec == 0 and keeps_groups(slots_key)
end

-- `items` drained into a pending archive of the window of `slots_key` (`joins`), or out of it
-- (written, trimmed, retracted): archpend counts them. One ZMSCORE and one ZADD or ZREM, a ZINCRBY
-- per item another pending archive holds too.
local function pending_moved(slots_key, items, joins)
  if #items == 0 then return end
  local key = base_of(slots_key) .. 'archpend'
  local counts, batch = redis.call('ZMSCORE', key, unpack(items)), {}
  for i, item in ipairs(items) do
    local count = tonumber(counts[i] or 0)
    if joins and count == 0 then batch[#batch + 1], batch[#batch + 2] = 1, item end
    if not joins and count == 1 then batch[#batch + 1] = item end
    -- Held by two pending archives at once (periods closed faster than they drained): rare.
    if (joins and count > 0) or (not joins and count > 1) then redis.call('ZINCRBY', key, joins and 1 or -1, item) end
  end
  if #batch == 0 then return end
  redis.call(joins and 'ZADD' or 'ZREM', key, unpack(batch))
end

-- `items` left a pending archive of the window of `slots_key` unwritten (a trim, a retraction): no
-- longer counted there, and the hooks archives_left told.
local function pending_left(slots_key, items)
  if not keeps_groups(slots_key) then return end
  pending_moved(slots_key, items, false)
  archives_left(slots_key, items)
end

-- `items`, whose rows were just written into the archive of `at` of the window of `slots_key`, are
-- held there (archheld: its start if newer) and no longer pending. Three commands.
local function rows_held(slots_key, at, items)
  if #items == 0 then return end
  local args = {}
  for _, item in ipairs(items) do args[#args + 1], args[#args + 2] = at, item end
  redis.call('ZADD', base_of(slots_key) .. 'archheld', 'GT', unpack(args))
  pending_moved(slots_key, items, false)
end

-- The kept archives of the window of `slots_key` now start at `oldest` (older ones dropped): the items
-- whose newest archive was older leave archheld, and the hooks archives_left are told (at most the
-- rows of the archives dropped).
local function held_dropped(slots_key, oldest)
  local key = base_of(slots_key) .. 'archheld'
  local gone = redis.call('ZRANGE', key, '-inf', '(' .. oldest, 'BYSCORE')
  if #gone == 0 then return end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. oldest)
  archives_left(slots_key, gone)
end

-- Ended entries one snapshot takes out of histheld: as many as the most rows a snapshot adds
-- (SNAPSHOT_TOP_ITEMS), so they keep pace; one left for later keeps its group a while, which no read
-- shows (none of its rows is shown any more).
local PRUNED_PER_SNAPSHOT = 1000

-- Hook snapshot_taken: the snapshot's items are held until `until_sec` (one ZADD GT); up to
-- PRUNED_PER_SNAPSHOT entries whose end passed leave first, and the hooks archives_left are told.
local function snapshot_held(base, until_sec, rows)
  local cfg_key = cfg_of(base)
  -- A group board's listing of a member window ("W%<group board>") ranks groups, not items.
  if string.find(base, '%', #cfg_key - 3, true) or redis.call('HGET', cfg_key, 'groups') ~= '1' then return end
  local key, now_sec = history_key(cfg_key), math.floor(call_state.now_ms() / 1000)
  local ended = redis.call('ZRANGE', key, '-inf', now_sec, 'BYSCORE', 'LIMIT', 0, PRUNED_PER_SNAPSHOT)
  if #ended > 0 then
    redis.call('ZREM', key, unpack(ended))
    archives_left(base, ended)
  end
  if #rows == 0 then return end
  local args = {}
  for _, row in ipairs(rows) do args[#args + 1], args[#args + 2] = until_sec, string.match(row, '^\30([^\31]*)') end
  redis.call('ZADD', key, 'GT', unpack(args))
end

-- Texts whose entries one chunk of segment archive rows checks (soonest to expire first), and entries
-- it takes out per text: at least as many as a chunk adds.
local SEGMENT_PRUNED_TEXTS, SEGMENT_PRUNED = 4, 1000

-- The segheld entries of the shard of `slots_key` whose text is gone (the soonest to expire first, up
-- to SEGMENT_PRUNED_TEXTS texts) leave, and the hooks archives_left are told.
local function segment_pruned(slots_key, cfg_key)
  local key, texts = segment_key(cfg_key), segment_text_key(cfg_key)
  for _ = 1, SEGMENT_PRUNED_TEXTS do
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if #first == 0 or redis.call('EXISTS', redis.call('HGET', texts, first[1])) == 1 then return end
    local ended = redis.call('ZRANGE', key, '-inf', first[2], 'BYSCORE', 'LIMIT', 0, SEGMENT_PRUNED)
    redis.call('ZREM', key, unpack(ended))
    redis.call('HDEL', texts, unpack(ended))
    archives_left(slots_key, ended)
  end
end

-- `items` (at least one), whose rows were just written into a segment's archive of the window of
-- `slots_key` on a `groups: true` board (text `text_key`, expiring on Redis' clock), are held by it
-- when it expires after the text holding them (PEXPIRETIME: one ZMSCORE, a ZADD and an HSET), and the
-- hooks segment_archived told (groups_lib keeps their groups); entries whose text is gone leave first
-- (segment_pruned).
local function segment_rows_held(slots_key, text_key, items)
  local cfg_key = cfg_of(slots_key)
  segment_pruned(slots_key, cfg_key)
  local key, until_ms = segment_key(cfg_key), redis.call('PEXPIRETIME', text_key)
  local before, scored, named = redis.call('ZMSCORE', key, unpack(items)), {}, {}
  for i, item in ipairs(items) do
    if not before[i] or tonumber(before[i]) < until_ms then
      scored[#scored + 1], scored[#scored + 2] = until_ms, item
      named[#named + 1], named[#named + 2] = item, text_key
    end
  end
  if #scored > 0 then
    redis.call('ZADD', key, unpack(scored))
    redis.call('HSET', segment_text_key(cfg_key), unpack(named))
  end
  for _, archived in ipairs(hooks.segment_archived) do archived(cfg_key, items) end
end

-- The window's archives go (archive_lib's drop_archives): so do its entries.
local function dropped(base)
  redis.call('UNLINK', base .. 'archheld', base .. 'archpend')
end

archive_held.cfg_of = cfg_of
archive_held.keeps_groups = keeps_groups
archive_held.holds = holds
archive_held.segment_lag_until = segment_lag_until
archive_held.tracked = tracked
archive_held.pending_moved = pending_moved
archive_held.pending_left = pending_left
archive_held.rows_held = rows_held
archive_held.segment_rows_held = segment_rows_held
archive_held.segment_key = segment_key
archive_held.segment_text_key = segment_text_key
archive_held.held_dropped = held_dropped
archive_held.dropped = dropped
archive_held.history_key = history_key

hooks.register_all('calendar', { 'snapshot_taken', snapshot_held })
