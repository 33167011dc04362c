-- module: archive_held
-- requires: call_state, chunks, hooks, keyspace, stored_windows
-- archive_held_lib: which items a calendar window's archives and the rolling windows' snapshots hold
-- rows of, on a `groups: true` board (archive_lib calls it as it takes, trims, writes and drops
-- archives; snaprows' take_snapshot through the hook snapshot_taken), so groups_lib keeps an item's
-- group exactly as long as some kept listing of the shard may show a row of it: a group hidden later
-- still finds the rows of its items that left every window (issue #49).
-- KEYS: 0
-- Keys, siblings of the window's slots key:
--   <base>archheld  zset  item -> start of the newest kept archive of the window holding its row (added
--                         as rows are written; an item whose newest one is dropped leaves, PRUNED at a
--                         time): at most one entry per row of the kept archives (keep x top), and the
--                         dropped ones' entries not pruned yet
--   <base>archpend  zset  item -> how many pending archives of the window hold its drained row, not yet
--                         written (taken: +1; written, trimmed or retracted: -1): at most the rows the
--                         pending archives hold (archrows)
-- Key, sibling of the config hash:
--   <tag>:histheld   zset  item -> until when (unix s, the app's clock) a rolling snapshot of the shard
--                          (a board window's or a segment's, or the previous listing taken with it) may
--                          show its row: the latest of its snapshots' ends (at + keep + 1 intervals, as
--                          history reads show a snapshot by the app's clock); entries whose end passed
--                          leave at the shard's next snapshots (PRUNED at a time). At most the rows of
--                          the snapshots kept, and the ended entries not pruned yet.
--   <tag>:segheld    zset  item -> when (unix ms, Redis' clock: PEXPIRETIME) the segment archive text
--                          holding its row that expires last expires, and <tag>:segtext (hash) item ->
--                          that text's key: a segment's archive text expires on Redis' clock (set as its
--                          first rows are written, archive_lib), which no script reads, so the item is
--                          held while that text exists. Entries whose text is gone leave, soonest first,
--                          as the shard's next segment archive rows are written (PRUNED at a time). At
--                          most the rows of the segment archives kept (keep x top per calendar window
--                          and segment), and those of texts gone not pruned yet.
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

-- How many ended entries a call prunes (of histheld, segheld, archheld) beyond what it adds: each call
-- that adds entries (a snapshot's rows, a chunk of archive rows) takes out up to as many ended ones as
-- it adds plus FIXED. A call adds at most as many new entries as it has rows, so after each such call
-- either no ended entry is left or the key holds at least FIXED fewer entries than before (no backlog
-- grows under churn); and a call's prune is bounded by what the call itself may add (snapshot_lib's
-- CROSSING rows, a chunk of archive rows), never by the backlog, each prune a few commands whatever
-- its size (held_of: chunks of chunks.CHUNK items a command).
local PRUNED = { FIXED = 100 }

-- Whether some kept listing of the shard of `cfg_key` holds a row of each of `items`: a snapshot not
-- yet past its end (histheld), a segment's archive Redis still keeps (segtext), a kept archive of a
-- calendar window (archheld) or one still being taken (archpend). The same few commands for any
-- number of items (a thousand a command): a ZMSCORE and an HMGET, an EXISTS per segment archive text
-- named (at most the shard's kept ones), the windows, and two ZMSCOREs a window.
local function held_of(cfg_key, items)
  local held, rest, names, exists = {}, {}, {}, {}
  local ends, texts = chunks.per_chunk('ZMSCORE', history_key(cfg_key), items), chunks.per_chunk('HMGET', segment_text_key(cfg_key), items)
  for i = 1, #items do
    held[i] = (ends[i] and tonumber(ends[i]) * 1000 > call_state.now_ms()) or false
    local text = texts[i]
    if not held[i] and text then
      if exists[text] == nil then exists[text] = redis.call('EXISTS', text) == 1 end
      held[i] = exists[text]
    end
    if not held[i] then rest[#rest + 1], names[#names + 1] = i, items[i] end
  end
  if #rest == 0 then return held end
  for _, w in ipairs(stored_windows.decode_windows(redis.call('HGET', cfg_key, 'windows'))) do
    local base = keyspace.sibling_key(cfg_key, 'cfg', w.name .. ':')
    for _, suffix in ipairs({ 'archheld', 'archpend' }) do
      local scores = chunks.per_chunk('ZMSCORE', base .. suffix, names)
      for n, i in ipairs(rest) do
        if scores[n] then held[i] = true end
      end
    end
  end
  return held
end

-- Whether some kept listing of the shard of `cfg_key` holds a row of `item` (held_of).
local function holds(cfg_key, item)
  return held_of(cfg_key, { item })[1]
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

-- The entries of archheld of the window of `slots_key` older than its oldest kept archive (`oldest`),
-- at most `most` of them, leave, and the hooks archives_left are told; the rest leave with the next.
local function held_pruned(slots_key, oldest, most)
  if not oldest then return end
  local key = base_of(slots_key) .. 'archheld'
  local gone = redis.call('ZRANGE', key, '-inf', '(' .. oldest, 'BYSCORE', 'LIMIT', 0, most)
  if #gone == 0 then return end
  redis.call('ZREM', key, unpack(gone))
  archives_left(slots_key, gone)
end

-- `items`, whose rows were just written into the archive of `at` of the window of `slots_key`, are
-- held there (archheld: its start if newer) and no longer pending; as many entries of archives dropped
-- before, and PRUNED.FIXED more, leave (held_pruned: those an archive's drop left for later).
local function rows_held(slots_key, at, items)
  if #items == 0 then return end
  local args = {}
  for _, item in ipairs(items) do args[#args + 1], args[#args + 2] = at, item end
  redis.call('ZADD', base_of(slots_key) .. 'archheld', 'GT', unpack(args))
  pending_moved(slots_key, items, false)
  held_pruned(slots_key, redis.call('ZRANGE', base_of(slots_key) .. 'snaps', 0, 0)[1], #items + PRUNED.FIXED)
end

-- The kept archives of the window of `slots_key` now start at `oldest` (older ones dropped): the items
-- whose newest archive was older leave archheld, PRUNED.FIXED of them now (an archive holds up to
-- ARCHIVE_TOP_ITEMS rows), the rest as the next archives' rows are written (rows_held), and the hooks
-- archives_left are told.
local function held_dropped(slots_key, oldest)
  held_pruned(slots_key, oldest, PRUNED.FIXED)
end

-- Hook snapshot_taken: the snapshot's items are held until `until_sec` (one ZADD GT); as many entries
-- whose end passed as the snapshot has rows, and PRUNED.FIXED more, leave first, and the hooks
-- archives_left are told. One left for later keeps its group a while, which no read shows (none of
-- its rows is shown any more).
local function snapshot_held(base, until_sec, rows)
  local cfg_key = cfg_of(base)
  -- A group board's listing of a member window ("W%<group board>") ranks groups, not items.
  if string.find(base, '%', #cfg_key - 3, true) or redis.call('HGET', cfg_key, 'groups') ~= '1' then return end
  local key, now_sec = history_key(cfg_key), math.floor(call_state.now_ms() / 1000)
  local ended = redis.call('ZRANGE', key, '-inf', now_sec, 'BYSCORE', 'LIMIT', 0, #rows + PRUNED.FIXED)
  if #ended > 0 then
    redis.call('ZREM', key, unpack(ended))
    archives_left(base, ended)
  end
  if #rows == 0 then return end
  local args = {}
  for _, row in ipairs(rows) do args[#args + 1], args[#args + 2] = until_sec, string.match(row, '^\30([^\31]*)') end
  redis.call('ZADD', key, 'GT', unpack(args))
end

-- Texts whose entries one chunk of segment archive rows checks (soonest to expire first).
local SEGMENT_PRUNED_TEXTS = 4

-- The segheld entries of the shard of `slots_key` whose text is gone (the soonest to expire first, of
-- up to SEGMENT_PRUNED_TEXTS texts), `most` of them at most, leave, and the hooks archives_left are told.
local function segment_pruned(slots_key, cfg_key, most)
  local key, texts = segment_key(cfg_key), segment_text_key(cfg_key)
  for _ = 1, SEGMENT_PRUNED_TEXTS do
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if most <= 0 or #first == 0 or redis.call('EXISTS', redis.call('HGET', texts, first[1])) == 1 then return end
    local ended = redis.call('ZRANGE', key, '-inf', first[2], 'BYSCORE', 'LIMIT', 0, most)
    redis.call('ZREM', key, unpack(ended))
    redis.call('HDEL', texts, unpack(ended))
    archives_left(slots_key, ended)
    most = most - #ended
  end
end

-- `items` (at least one), whose rows were just written into a segment's archive of the window of
-- `slots_key` on a `groups: true` board (text `text_key`, expiring on Redis' clock), are held by it
-- when it expires after the text holding them (PEXPIRETIME: one ZMSCORE, a ZADD and an HSET), and the
-- hooks segment_archived told (groups_lib keeps their groups); as many entries whose text is gone as
-- `items`, and PRUNED.FIXED more, leave first (segment_pruned).
local function segment_rows_held(slots_key, text_key, items)
  local cfg_key = cfg_of(slots_key)
  segment_pruned(slots_key, cfg_key, #items + PRUNED.FIXED)
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

hooks.export_all(archive_held, { 'cfg_of', cfg_of, 'keeps_groups', keeps_groups, 'holds', holds, 'held_of', held_of,
  'segment_lag_until', segment_lag_until, 'tracked', tracked, 'pending_moved', pending_moved,
  'pending_left', pending_left, 'rows_held', rows_held, 'segment_rows_held', segment_rows_held,
  'segment_key', segment_key, 'segment_text_key', segment_text_key, 'held_dropped', held_dropped, 'dropped', dropped,
  'history_key', history_key })

hooks.register_all('calendar', { 'snapshot_taken', snapshot_held })
