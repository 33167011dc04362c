-- module: snapshot
-- requires: archive, call_state, drains, hooks, keyspace, order, slot_due, snaprows, window
-- snapshot_lib: a window's history (snapshots of its listing at slot boundaries), the previous ranks
-- read from it, and the board's change version. Prepended after window_lib to every ranking script
-- that expires or writes, so the first script to reach a new slot takes the snapshot before it
-- expires or applies anything.
-- KEYS: 0
-- Keys, siblings of the window's slots key (same hash tag):
--   <base>snaps        zset   snapshot boundaries (unix s) -> same; the newest `keep` intervals
--   <base>snap:<at>    string the listing when the slot ending at `at` closed, best first, at most
--                      `top` rows "\30<item>\31<score>\31<n>", n the row's position from 1 (ids hold
--                      no control characters; snapshots taken before positions were stored lack
--                      "\31<n>" and are read by counting rows). On a tiebreak board a row is
--                      "\30<item>\31<score>\31<mark>\31<n>", rows in its pair order, the mark the live
--                      rows carry (tiebreak_lib's: the pair after the score, strict: with its tie
--                      mark and id); rows of two fields are read by score alone (taken before marks
--                      were stored: each snapshot reads as it was taken)
--   <base>prev         zset   item -> score in the latest snapshot (what previousRank counts in); on a
--                      tiebreak board its rank there instead, negated unless the board is `order:
--                      asc` (a key ordered as the board orders, so the same reads rank it)
--   <base>snapnext, <base>prevnext  string, zset  a listing stored in pages: the pages staged so far
--                      (snaprows' PAGED), renamed to snap:<at> and prev by the last; no read reads them
-- Config hash fields:
--   snapshots          "<window> <keep> <top>;..." for the windows keeping snapshots (absent: none)
--   snapMark:<window>  the slot start (unix s) the window's scripts last ran in
--   ver                change version: bumped by every write, polled by the live stream
-- A segment's window ("<window>~<segment>", segment_lib) keeps the history its window's setting says
-- under its own keys, the same way, with its mark in <base>mark (string, expiring SEGMENT_MARK_KEEP
-- intervals after its last run: a segment with data is visited at every boundary, see segment_lib)
-- and "<tag>:seghist" (segment -> until when, unix s, it may hold history: what drop_snapshots reaches).
-- A segment's calendar archives expire `keep` periods after they close (segments come and go: a
-- board's are kept until `keep` newer ones replace them).

local CALL = call_state.CALL
local CONFIG = call_state.CONFIG
call_state.config_field_add('snapshots', 'snapshots', true) -- read with the version on every board

-- SNAP_ROW and SNAP_FIELD, the row and field separators: archive_lib, a module before this one.
-- The settings snapshot_confs parsed, by the field's text (a pure function of it), kept from call to call
-- (every read and write of a board keeping snapshots asks them): read only; a call_state.memo of 256.
local CONFS_MEMO = call_state.memo(256)

-- name -> { keep, top } for the windows keeping snapshots, or nil when none does (read with the config).
-- Never written: a memo's (CONFS_MEMO).
local function snapshot_confs(cfg_key)
  local stored = call_state.config_field(cfg_key, 'snapshots')
  if not stored then return nil end
  local confs = CONFS_MEMO.by[stored]
  if confs then return confs end
  confs = {}
  for name, keep, top in string.gmatch(stored, '([^; ]+) (%d+) (%d+)') do
    confs[name] = { keep = tonumber(keep), top = tonumber(top) }
  end
  return call_state.memo_put(CONFS_MEMO, stored, confs)
end

-- Stores which windows keep snapshots (from the windows JSON a config write stores).
local function store_snapshot_confs(cfg_key, windows)
  local parts = {}
  for _, w in ipairs(windows) do
    if type(w.snapshots) == 'table' then parts[#parts + 1] = w.name .. ' ' .. w.snapshots.keep .. ' ' .. w.snapshots.top end
  end
  call_state.store_list_field(cfg_key, 'snapshots', parts)
end

-- "<tag>:cfg" and "<tag>:<window>:slots" -> "<window>"
local function window_name_of(cfg_key, slots_key)
  return string.sub(slots_key, #cfg_key - 2, -7)
end

-- Intervals a segment window's mark outlives its last run: one more than the snapshots it keeps, so a
-- mark is never forgotten while a snapshot it would take could still be read.
local SEGMENT_MARK_KEEP = 1

-- The snapshot setting of the window of `slots_key` (a segment's or a metric's: its window's), and the
-- segment it belongs to (nil: the board's). A metric's window "<window>~@<metric>" ("@" is in no segment
-- name) keeps history as the board's does, crossed by that metric's calls and scheduler visits.
-- What the name of the window of `slots_key` tells (snapshot_conf_of): the window whose setting it keeps, its
-- segment, whether a group board derives it; kept from call to call (a pure function of both keys: a write of 8
-- segments asks it some 70 times), emptied when it holds `max`.
local NAMES = call_state.memo(4096)

local function name_parts(cfg_key, slots_key)
  local known = NAMES.by[slots_key]
  if known and known.cfg_key == cfg_key then return known end
  local name = window_name_of(cfg_key, slots_key)
  local window, segment = string.match(name, '^([^~]*)~(.*)$')
  known = { cfg_key = cfg_key, window = window }
  if window and string.sub(segment, 1, 1) ~= '@' then known.segment = segment end
  if not window then
    -- A group board's listing of the member window W, "W%<group board>": group_history_lib keeps its
    -- history (over a sharded member board, on shard 0, merged from the shards' parts: group_parts_lib).
    local member = string.match(name, '^([^%%]*)%%')
    known.window, known.derived = member or name, member and true or nil
  end
  return call_state.memo_put(NAMES, slots_key, known)
end

local function snapshot_conf_of(confs, cfg_key, slots_key)
  local parts = name_parts(cfg_key, slots_key)
  return confs[parts.window], parts.segment, parts.derived
end

local snapshot_lifetime_sec = snaprows.snapshot_lifetime_sec
local take_snapshot = snaprows.take_snapshot

-- Snapshot rows one call may take (a listing of 1 000 rows takes about 4 ms to store): a call takes
-- the first snapshot it meets whatever its rows (at most SNAPSHOT_TOP_ITEMS; a listing of more than 500 in
-- pages of 500, one a call, a tiebreak board's rows weighing 2: snaprows' PAGED), and the next ones
-- while their rows fit, each weighing FIXED_ROWS more (its dozen commands whatever its size: a page of
-- segments crossing each one's small listings). A boundary left is crossed by the next call
-- (CROSSING_ERROR: the service sends the call again), so a write naming 8 filled segments of 8
-- snapshotted windows is 72 listings of 2 pages (144 calls: a page of 500 rows fills a call), never one
-- call of all of them.
-- A read or an admin step whose call stored a snapshot of more than READ_APART_ROWS rows (`stored_rows`
-- in the call `stored_seq`) leaves its own work (a page of up to 1 000 rows, as long to read as the
-- snapshot to store; a step's drain and units) to the next call (READ_LEFT_ERROR, leave_apart): the
-- first read or step after a boundary is then two calls of about half the work each, not one of both.
local CROSSING = { ROWS_PER_CALL = 1000, FIXED_ROWS = 50, READ_APART_ROWS = 100, seq = -1, rows = 0,
  stored_seq = -1, stored_rows = 0, drained_seq = -1, unmarked = 0 }

-- Whether this call may store a snapshot of `rows` rows, each weighing `per_row` (default 1; a tiebreak board's 2:
-- snaprows.next_piece), counting them when it may.
local function crossing_allowed(rows, per_row)
  if CROSSING.seq ~= CALL.seq then CROSSING.seq, CROSSING.rows = CALL.seq, 0 end
  if CROSSING.drained_seq == CALL.seq and rows > CROSSING.READ_APART_ROWS then return false end
  local weight = rows * (per_row or 1) + CROSSING.FIXED_ROWS
  if CROSSING.rows > 0 and CROSSING.rows + weight > CROSSING.ROWS_PER_CALL + CROSSING.FIXED_ROWS then return false end
  CROSSING.rows = CROSSING.rows + weight
  return true
end

-- Counts `rows` of a crossing's work before a listing (group_history_lib settles a group board's
-- scores first) as crossing_allowed counts a listing's; answers the rows the call may still take.
local function crossing_work(rows)
  if CROSSING.seq ~= CALL.seq then CROSSING.seq, CROSSING.rows = CALL.seq, 0 end
  if rows > 0 then CROSSING.rows, CROSSING.stored_seq, CROSSING.stored_rows = CROSSING.rows + rows, CALL.seq, rows end
  return math.max(0, CROSSING.ROWS_PER_CALL - CROSSING.rows)
end

-- Whether `rows` of a crossing's work fit what this call may still take, counted before they are done:
-- a piece larger than a whole call fits only a call that took nothing yet, alone.
local function crossing_fits(rows)
  local left = crossing_work(0)
  return left > 0 and (rows <= left or left >= CROSSING.ROWS_PER_CALL)
end

-- The error a script answers, before it changes anything, when a boundary it must cross first is left
-- for the next call (the service sends the same call again: src/redis/functions.ts).
local CROSSING_ERROR = 'TB_CROSSING snapshot boundaries left for the next call'
-- The same for a read or a step that stored a snapshot and left its own work (leave_apart): what it
-- changed is the snapshot (and a step's record, as a step repeated finds it), so the call sent again
-- runs as if the snapshot had been there. stored_apart: whether this call stored more than READ_APART_ROWS.
local READ_LEFT_ERROR = 'TB_CROSSING snapshot stored, the rest left for the next call'
local function stored_apart() return CROSSING.stored_seq == CALL.seq and CROSSING.stored_rows > CROSSING.READ_APART_ROWS end
local function leave_apart() if stored_apart() then error({ err = READ_LEFT_ERROR }) end end

-- Stages a page before the last of a snapshot stored in pages (snaprows.stage_page); answers whether it did (false:
-- Redis refused the write, the boundary then goes without a snapshot as a refused mark does).
local function stage_before_last(base, top_key, at, conf, interval_sec, page)
  local rows = snaprows.stage_page(base, top_key, at, conf, interval_sec, page)
  if not rows then return false end
  CROSSING.stored_seq, CROSSING.stored_rows = CALL.seq, #rows
  return true
end

-- Called before a script expires or writes a window: the first call in a new slot takes the snapshot
-- at the end of the slot the window last ran in (its results then are still exactly the listing at
-- that boundary: nothing of a later slot was applied and nothing was expired since), once, whoever
-- makes it. The first call ever only marks the slot (a segment's: its first drain or write, `create`).
-- A calendar window (origin_sec > 0: one slot per period) only tells the hook period_closed its closed
-- slot (archive_lib archives it in chunks as it drains, under the closed period's start, since only
-- the app knows its end). Answers false when the snapshot, or the rest of a listing stored in pages,
-- is left for the next call (crossing_allowed): the caller must then leave the window as it is.
-- The segment windows' marks this call found current (base -> mark): a write crosses its segments' boundaries
-- before it changes anything, then again as each segment's first write (segment_lib), and reads each mark once.
local current_marks = { seq = 0, by = {} }

-- cross_boundary's answer (true) where it leaves the window without a mark at now's slot: a segment's without history
-- and no `create`, or a mark or staged page Redis refused. Counted (snapshot.unmarked_count): a write crosses such
-- a segment again as its first write (segment_lib's first_write).
local function unmarked()
  CROSSING.unmarked = CROSSING.unmarked + 1
  return true
end

local function cross_boundary(cfg_key, confs, slots_key, top_key, now_sec, interval_sec, origin_sec, create)
  local conf, segment, derived = snapshot_conf_of(confs, cfg_key, slots_key)
  if not conf or derived then return true end
  local current = window.current_slot(now_sec, interval_sec, origin_sec)
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  if current_marks.seq ~= CALL.seq then current_marks.seq, current_marks.by = CALL.seq, {} end
  local mark = segment and current_marks.by[base]
  if mark and mark >= current then return true end
  mark = tonumber(segment and redis.call('GET', base .. 'mark') or redis.call('HGET', cfg_key, 'snapMark:' .. window_name_of(cfg_key, slots_key)))
  if mark and mark >= current then
    if segment then current_marks.by[base] = mark end
    return true
  end
  -- A segment's history starts with its first write or drain (`create`): a read of a segment without
  -- one stores nothing (any name may be read).
  if segment and not mark and not create then return unmarked() end
  if mark and not segment then
    for _, crossing in ipairs(hooks.boundary_crossing) do
      if not crossing(cfg_key, slots_key, top_key, conf, mark, interval_sec, origin_sec) then return false end
    end
  end
  local snapshots, page = mark and (origin_sec or 0) == 0, nil
  if snapshots then
    local rows, per_row
    rows, per_row, page = snaprows.next_piece(base, top_key, mark + interval_sec, conf)
    if not crossing_allowed(rows, per_row) then return false end
    -- A page before the last is staged and the boundary left for the next call (snaprows' PAGED).
    if page and not page.last then return not stage_before_last(base, top_key, mark + interval_sec, conf, interval_sec, page) and unmarked() end
  end
  -- On a full Redis (maxmemory, noeviction) this first write of the script is refused: the boundary
  -- then goes without a snapshot, and the expiry that follows (which frees memory) still runs.
  local marked
  if segment then
    local mark_sec = (conf.keep + SEGMENT_MARK_KEEP) * interval_sec
    marked = redis.pcall('SET', base .. 'mark', current, 'EX', mark_sec)
    if not (type(marked) == 'table' and marked.err) then
      redis.call('ZADD', keyspace.sibling_key(cfg_key, 'cfg', 'seghist'), 'GT', now_sec + mark_sec, segment)
    end
  else
    marked = redis.pcall('HSET', cfg_key, 'snapMark:' .. window_name_of(cfg_key, slots_key), current)
  end
  if type(marked) == 'table' and marked.err then return unmarked() end
  if not mark then return true end
  if not snapshots then
    -- A segment's archives expire `keep` periods after they close (segments come and go).
    for _, closed in ipairs(hooks.period_closed) do closed(slots_key, mark, conf, segment and conf.keep * interval_sec or 0) end
  else
    CROSSING.stored_seq = CALL.seq
    CROSSING.stored_rows = take_snapshot(base, top_key, mark + interval_sec, conf, interval_sec, page)
  end
  return true
end

-- cross_boundary for every window of the call's `windows` (call_state.bind_windows). Answers the snapshot settings it read (snapshot_confs). Every
-- caller runs it before it changes anything: a boundary left for the next call is a CROSSING_ERROR.
local function cross_all(windows, now_sec)
  -- A board keeping no snapshots (most), told by the call's config copy: no lookup.
  if CALL.cfg_key == CONFIG.cfg_key and not CONFIG.snapshots then return nil end
  local confs = snapshot_confs(CALL.cfg_key)
  if not confs then return nil end
  for w = 0, windows.count - 1 do
    local _, interval_sec, origin_sec = window.window_rule(windows, w)
    if not cross_boundary(CALL.cfg_key, confs, windows.slots[w], windows.tops[w], now_sec, interval_sec, origin_sec) then
      error({ err = CROSSING_ERROR })
    end
  end
  return confs
end

-- cross_boundary for one window of the board of `cfg_key`. Answers the window's snapshot setting
-- ({ keep, top }), or nil when it keeps none.
local function cross_window_of(cfg_key, slots_key, top_key, now_sec, interval_sec, origin_sec)
  local confs = snapshot_confs(cfg_key)
  local conf = confs and snapshot_conf_of(confs, cfg_key, slots_key)
  if conf and not cross_boundary(cfg_key, confs, slots_key, top_key, now_sec, interval_sec, origin_sec) then
    error({ err = CROSSING_ERROR })
  end
  return conf
end

-- What every named single-window read (src/ranking/reads) does first: checks the config version,
-- crosses the window's snapshot boundary and expires what fell out, for the one window of `header`
-- (reader.read_call's). Answers an error message (nil: none), whether expired data remains (0|1) and
-- the window's snapshot setting (nil: it keeps none).
local function open_read(cfg_key, slots_key, top_key, header)
  local err = window.version_error(cfg_key, header.version)
  if err then return err end
  local rule, now_sec = header.windows[1], header.now_sec
  local keeps = cross_window_of(cfg_key, slots_key, top_key, now_sec, rule.interval_sec, rule.origin_sec)
  leave_apart()
  local _, more = window.expire_window(slots_key, top_key, now_sec, rule.period_sec, rule.interval_sec, header.budget, rule.origin_sec)
  return nil, more and 1 or 0, keeps
end

-- A named single-window read's start (keys cfg, slots, top): binds the call and reads its args (call_lib), then
-- open_read: the error reply to answer at once (nil: none), header, args, open_read's draining and keeps.
local function begin_read(keys, args, contract)
  local header, arg = call_state.begin_named_call(keys, args, contract)
  local err, draining, keeps = open_read(keys[1], keys[2], keys[3], header)
  return err and redis.error_reply(err), header, arg, draining, keeps
end

-- open_read's counterpart for a write: cross_all, expiry within the header's budget (its fields weighed by what
-- the board's options run for each: drain_lib; what it leaves, the segments' the write names), the due slots
-- settled, then the options' preparation of the ranks the write reads (hooks_lib write_opened).
local function open_write(windows, header)
  local confs = cross_all(windows, header.now_sec)
  local drain = drains.call_drain(header.budget)
  local draining = window.expire_all(windows, header.now_sec, header.budget, drain)
  slot_due.settle_slot_due()
  for _, opened in ipairs(call_state.hooks_of(CALL.cfg_key).write_opened) do opened(windows) end
  return confs, draining
end

-- The windows (0-based index -> true) of the call's `windows` that keep snapshots by `confs` (what
-- cross_all answered), or nil when none does: the others answer no previous rank without a lookup.
local function snapshot_windows(windows, confs)
  if not confs then return nil end
  local keeping = {}
  for w = 0, windows.count - 1 do
    if snapshot_conf_of(confs, CALL.cfg_key, windows.slots[w]) then keeping[w] = true end
  end
  return keeping
end

local function bump_version(cfg_key, writes) -- a count as text: a Lua number costs Redis a snprintf
  redis.call('HINCRBY', cfg_key, 'ver', (writes or 1) == 1 and '1' or string.format('%d', writes))
end

-- When the scheduler must next visit for a snapshot: the end of the current slot of the shortest
-- snapshot-keeping window that holds data (its next boundary must be crossed even if nobody writes),
-- or nil, of the call's `windows` (call_state.bind_windows).
local function snapshot_due_ms(windows, now_sec)
  local confs = snapshot_confs(CALL.cfg_key)
  if not confs then return nil end
  local due = nil
  for w = 0, windows.count - 1 do
    local slots_key = windows.slots[w]
    if snapshot_conf_of(confs, CALL.cfg_key, slots_key) and redis.call('ZCARD', windows.tops[w]) > 0 then
      local _, interval_sec, origin_sec = window.window_rule(windows, w)
      local ends = (window.current_slot(now_sec, interval_sec, origin_sec) + interval_sec) * 1000
      if due == nil or ends < due then due = ends end
    end
  end
  return due
end

-- A write that created a slot (`new_due_ms` not nil) also makes the board due at the next snapshot
-- boundary: the earlier of the two.
local function with_snapshot_due(new_due_ms, windows, now_sec)
  if new_due_ms == nil then return nil end
  return math.min(new_due_ms, snapshot_due_ms(windows, now_sec) or math.huge)
end

hooks.export_all(snapshot, { 'snapshot_confs', snapshot_confs, 'store_snapshot_confs', store_snapshot_confs,
  'window_name_of', window_name_of, 'snapshot_conf_of', snapshot_conf_of,
  'snapshot_lifetime_sec', snapshot_lifetime_sec, 'cross_boundary', cross_boundary,
  'crossing_allowed', crossing_allowed, 'crossing_work', crossing_work, 'crossing_fits', crossing_fits,
  'CROSSING_ERROR', CROSSING_ERROR, 'stored_apart', stored_apart, 'CROSSING_ROWS', CROSSING.ROWS_PER_CALL })
snapshot.note_drained = function() CROSSING.drained_seq = CALL.seq end -- a step drained: no listing of many rows after
-- The windows cross_boundary left without a mark (unmarked), counted from call to call: only its growth is read.
snapshot.unmarked_count = function() return CROSSING.unmarked end
hooks.export_all(snapshot, { 'leave_apart', leave_apart, 'cross_all', cross_all, 'open_write', open_write,
  'cross_window_of', cross_window_of, 'open_read', open_read, 'begin_read', begin_read,
  'snapshot_windows', snapshot_windows, 'bump_version', bump_version, 'snapshot_due_ms', snapshot_due_ms,
  'with_snapshot_due', with_snapshot_due })
