-- requires: archive, group_members, group_of, group_parts, hooks, order, snaprows, snapshot
-- group_history_out_lib (no table of its own: it registers its hooks): what a group board's kept
-- listing (group_history_lib) needs for an item retraction on the member board, and the rewrite.
-- A kept listing holds groups' scores only; a retraction needs each group's counted members at the
-- boundary (its best `top` members then: their scores are known nowhere else once the member window
-- moved on). So the crossing records them before it stores the listing, beside it:
--   <base>cnt:<at>  hash  "g\31<group>" -> the group's counted members at the boundary, best first
--                         ("\30<item>\31<score>" rows), for each group the listing holds;
--                         "i\31<item>" -> its group; "\29r" -> the rule ("<top> <decay>");
--                         "\29n" -> how many of the listing's groups are recorded (-1: done);
--                         "\29c" -> the counted members recorded; "m\31<item>", "s\31<group>" -> a
--                         retraction's rewrite split over two calls (MOVE, SCORE below)
-- at most the listing's share of MAX_RECORDED_MEMBERS_PER_BOARD (listing_room: groups best first until
-- the next would pass it; a retraction leaves the rows of the groups not recorded as they were),
-- recorded a few groups at a time within the call's crossing rows (snapshot_lib's crossing_work: a
-- boundary left while some remain, as a settle leaves it), expiring with a snapshot, dropped with an
-- archive. An item retraction (hook item_history_out, retract_item's last part) then rewrites each kept
-- listing whose record names the item: the group loses the item's row, its score is recomputed from
-- the members it still counts (the ones after the item move up one weight; the member past `top` does
-- not move in, as a member snapshot takes in no row past its own `top`), and the group's row moves to
-- its new place (out of the listing when it counts no member or its score is not listed); rows past
-- the listing's `top` do not move in either. The newest listing's previous ranks (<base>prev) follow.
-- KEYS: 0

local NEXT, RULE, COUNT, GROUP, ITEM = '\29n', '\29r', '\29c', 'g\31', 'i\31'
-- A rewrite split over two calls (listing_without): "m\31<item>" -> its group, whose record no longer
-- counts the item but whose listed row has not moved yet; "s\31<group>" -> the score the row moves to
-- ('': out), the group's record's now (a rewrite moving the row to it drops it).
local MOVE, SCORE = 'm\31', 's\31'
-- The work of one call's rewrite of a listing: MEMBER_WORK a member row of the group's record summed
-- again (~2.7 k instructions), ROW_WORK a listing row written again (~4 k), beside the call's ~2.2 M of
-- reads; past WORK_PER_CALL the record is rewritten in one call and the row moved in the next (a group of
-- 1 000 members sinking past 999 rows: 11.4-11.7 M in one call; issue #45). A call of either alone fits.
local MEMBER_WORK, ROW_WORK, WORK_PER_CALL = 2, 3, 3000
-- A merged record's while it is written (counted_page): the merge's token, and 1 once a group did not fit.
local TOKEN, FULL = '\29t', '\29f'
-- Rows a ZADD of previous ranks written again takes at once (its arguments within Lua's C stack).
local PREV_PAIRS = 1000

local function counted_key(base, at) return base .. 'cnt:' .. at end

-- One group's counted members into the record `key`, when they are at most `room`: answers the
-- member rows read and the members recorded (nil: not recorded, more than `room`). Without
-- exceptions a group counts min(top, its members): one past `room` is not read.
local function record_group(key, base, group, top, ex, room)
  local group_key = group_of.GROUP_OF.group_key(base, group)
  if not ex and math.min(top, redis.call('ZCARD', group_key)) > room then return 1, nil end
  local rows, read = group_members.best_rows(group_key, top, ex)
  if #rows / 2 > room then return read + 1, nil end
  return read + 1, group_parts.record_rows(key, group, rows)
end

-- The counted members one listing's record may hold: its share of the group board's (<base>rcap,
-- MAX_RECORDED_MEMBERS_PER_BOARD) over the `keep` listings kept, one a rolling window's records
-- outlive and one in progress. 0 (nothing recorded) before a membership change set it.
local function listing_room(base, keep)
  return math.floor(tonumber(redis.call('GET', base .. 'rcap') or '0') / (keep + 2))
end

-- Records the counted members of the groups the listing at `at` holds (the best `conf.top` of
-- `groups`), from the first not recorded yet, while the call's crossing rows last, best first until
-- the next group would pass the listing's room (listing_room: that group and those after it are not
-- recorded): true once done (the record then expires in `lifetime_sec`, or never: nil).
-- `member_top`: the member window's results.
local function counted_recorded(base, groups, at, conf, member_top, lifetime_sec)
  local key = counted_key(base, at)
  local first, count, rule, top = group_parts.resumed(key, base)
  if not first then return true end
  local room = listing_room(base, conf.keep)
  local ex = group_members.exceptions_of(member_top)
  local page = order.score_page(groups, first, conf.top - 1)
  for i = 1, #page, 2 do
    if not order.listed(groups, tonumber(page[i + 1])) then break end
    if snapshot.crossing_work(0) <= 0 then
      redis.call('HSET', key, NEXT, first, COUNT, count, RULE, rule)
      redis.call('EXPIRE', key, lifetime_sec or 86400)
      return false
    end
    local read, recorded = record_group(key, base, page[i], top, ex, room - count)
    snapshot.crossing_work(read)
    if not recorded then break end
    first, count = first + 1, count + recorded
  end
  redis.call('HSET', key, NEXT, -1, COUNT, count, RULE, rule)
  if lifetime_sec then redis.call('EXPIRE', key, lifetime_sec) else redis.call('PERSIST', key) end
  return true
end

-- A kept listing's rows and a record's member rows ("\30<item>\31<score>..."): each item and its
-- score's text as stored, so a rewrite copies it rather than formatting it again (the same double).
local ROW = archive.SNAP_ROW .. '([^\30\31]*)\31([^\30\31]*)'

-- The group's counted members at `at` without `item`: the record's text without the item's row (rows
-- "\30<item>\31<score>", record_rows'), its score now (nil: it counts no member) and the member rows summed.
-- The sum is taken again in the members' order (the rows before the item's, then those after it), so it
-- is the one a crossing takes over the same members; only the scores are read, not the items.
local function group_without(key, group, item)
  local decay = tonumber(string.match(redis.call('HGET', key, RULE) or '1 1', ' (.+)$'))
  local text = redis.call('HGET', key, GROUP .. group) or ''
  local at = string.find(text, archive.SNAP_ROW .. item .. archive.SNAP_FIELD, 1, true)
  if at then
    local after = string.find(text, archive.SNAP_ROW, at + 1, true)
    text = string.sub(text, 1, at - 1) .. (after and string.sub(text, after) or '')
  end
  local kept, sum, weight = 0, 0, 1
  for held in string.gmatch(text, '\31([^\30\31]*)') do kept, sum, weight = kept + 1, sum + weight * held, weight * decay end
  if kept == 0 then return text, nil, 0 end
  return text, tonumber(string.format('%.17g', sum)), kept
end

-- The group's record at `key` without `item` (`text`, group_without's). `score` (nil: out) is the one its
-- row moves to: `pending` keeps it for the call that moves the row (its MOVE and SCORE fields), else the
-- row moves in this call and a score another rewrite left pending is dropped (the row takes this one).
local function group_written(key, group, item, text, score, pending)
  redis.call('HSET', key, GROUP .. group, text)
  redis.call('HDEL', key, ITEM .. item)
  if not pending then
    redis.call('HDEL', key, SCORE .. group)
    return
  end
  redis.call('HSET', key, MOVE .. item, group, SCORE .. group, score and string.format('%.17g', score) or '')
end

-- The row of a listing's text starting at byte `at`: its item, score text and stored position (nil in a
-- listing taken before positions were stored), and the byte after it.
local function listed_row(text, at)
  local field = string.find(text, archive.SNAP_FIELD, at + 1, true)
  local _, position, next_row = snaprows.row_at(text, at)
  local second = string.find(text, archive.SNAP_FIELD, field + 1, true)
  local score_end = (second and second < next_row) and second or next_row
  return string.sub(text, at + 1, field - 1), string.sub(text, field + 1, score_end - 1), position, next_row
end

-- The rows of a listing's text before byte `at` (a row's start, or past the end: `count`, its rows): the
-- stored position of the row there, else (no position stored) counted.
local function rows_before(text, at, count)
  if at > #text then return count end
  local _, _, position = listed_row(text, at)
  if position then return position - 1 end
  return select(2, string.gsub(string.sub(text, 1, at - 1), archive.SNAP_ROW, ''))
end

-- The first byte of `text` (a listing's rows, best first) whose row `moved` is ahead of (snaprows'
-- ahead_of), or past the end: a binary search over byte offsets (count_ahead's), no row parsed but
-- the ~10 it visits.
local function place_of(text, moved, ascending)
  local lo, hi = 1, #text + 1
  while lo < hi do
    local row = string.find(text, archive.SNAP_ROW, math.floor((lo + hi) / 2), true)
    if not row or row >= hi then row = lo end
    local item, held, _, after = listed_row(text, row)
    if snaprows.ahead_of(moved, { item = item, score = tonumber(held) }, ascending) then hi = row else lo = after end
  end
  return lo
end

-- A listing row's item and score ("\30<item>\31<score>"), without what follows (its position).
local ROW_HEAD = archive.SNAP_ROW .. '[^\30\31]*\31[^\30\31]*'

-- The rows of `segment` (a listing's text) written again into `parts` with positions from `first` on,
-- items and scores' texts as stored, positions' texts the library's (no sprintf a row); answers how many.
local function renumbered(segment, first, parts)
  local n, k, positions, field = first, #parts, archive.POSITION_TEXTS, archive.SNAP_FIELD
  for head in string.gmatch(segment, ROW_HEAD) do
    k = k + 1
    parts[k] = head .. field .. (positions[n] or n)
    n = n + 1
  end
  return n - first
end

-- The move of `group`'s row in the listing's text `text` of `count` rows (its row, if listed, `old`: bytes
-- old.at..old.after - 1 at position old.position) to `score` (nil: out), in the board's order: the text
-- without the row (`rest`, `left` rows), the row's old place there (`cut`) and new one (`at`), and the
-- bytes of the rows written again (`first`..`last` - 1, `rows` of them). Rows before both places keep
-- their text, and so do rows after both when it is listed before and after. Only the rows a binary search
-- visits are read: a listing of 1 000 rows was parsed whole (issue #45).
local function move_of(text, count, group, score, ascending, old)
  local rest = old and (string.sub(text, 1, old.at - 1) .. string.sub(text, old.after)) or text
  local cut, left = old and old.at or #rest + 1, old and count - 1 or count
  local at = score and place_of(rest, { item = group, score = score }, ascending) or #rest + 1
  local first, last = math.min(cut, at), (old and score) and math.max(cut, at) or #rest + 1
  local rows = rows_before(rest, last, left) - rows_before(rest, first, left)
  return { rest = rest, cut = cut, left = left, at = at, first = first, last = last, rows = math.max(rows, 0) }
end

-- The listing's text after `move` (move_of's) of `group`'s row (`old`) to `score` (nil: out): the rows
-- between its old place and its new one written again with their new positions.
local function moved_text(move, group, score, old)
  local rest, cut, at, first, last = move.rest, move.cut, move.at, move.first, move.last
  local n = (old and first == cut) and old.position or rows_before(rest, first, move.left) + 1
  local parts = { string.sub(rest, 1, first - 1) }
  local row = score and archive.SNAP_ROW .. group .. archive.SNAP_FIELD .. string.format('%.17g', score) .. archive.SNAP_FIELD
  if row and at <= cut then
    parts[2], n = row .. n, n + 1
  end
  n = n + renumbered(string.sub(rest, first, last - 1), n, parts)
  if row and at > cut then parts[#parts + 1] = row .. n end
  parts[#parts + 1] = string.sub(rest, last)
  return table.concat(parts)
end

-- The newest listing's previous ranks (<base>prev, its rows: every writer of the newest listing writes
-- them) after `group`'s row went from `was` (score text; nil: not listed) to `score` (nil: out) among
-- `count` rows: that row alone while prev holds them, else prev written again from the listing's new
-- text `text`.
local function previous_rewritten(base, group, was, score, count, text)
  local prev = base .. 'prev'
  local held = redis.call('ZSCORE', prev, group)
  local held_score, was_score = held and tonumber(held) or nil, was and tonumber(was) or nil
  if redis.call('ZCARD', prev) == count and held_score == was_score then
    if score then redis.call('ZADD', prev, string.format('%.17g', score), group) else redis.call('ZREM', prev, group) end
    return
  end
  local ttl = redis.call('PTTL', prev)
  redis.call('DEL', prev)
  local pairs_of, rows = {}, 0
  for item, row_score in string.gmatch(text, ROW) do
    pairs_of[#pairs_of + 1], pairs_of[#pairs_of + 2], rows = row_score, item, rows + 1
    if #pairs_of == 2 * PREV_PAIRS then
      redis.call('ZADD', prev, unpack(pairs_of))
      pairs_of = {}
    end
  end
  if #pairs_of > 0 then redis.call('ZADD', prev, unpack(pairs_of)) end
  if ttl > 0 and rows > 0 then redis.call('PEXPIRE', prev, ttl) end
end

-- The rows of a listing's text: its last row's stored position, else counted.
local function listing_count(text)
  return snaprows.row_count(text) or select(2, string.gsub(text, archive.SNAP_ROW, ''))
end

-- The listing's text `text`'s rows, `group`'s row in it ({ at, after, position }: nil when not listed)
-- and that row's score text.
local function listed_old(text, group)
  local count = listing_count(text)
  local old_at = string.find(text, archive.SNAP_ROW .. group .. archive.SNAP_FIELD, 1, true)
  if not old_at then return count, nil, nil end
  local _, held, position, after = listed_row(text, old_at)
  return count, { at = old_at, after = after, position = position or rows_before(text, old_at, count) + 1 }, held
end

-- The score the row of `group` moves to, which a rewrite of `item` left pending (MOVE): false when
-- another rewrite moved the row since (it took the SCORE field), else the record's score (nil: out).
local function pending_score(key, group, item)
  local held = redis.call('HGET', key, SCORE .. group)
  redis.call('HDEL', key, MOVE .. item, SCORE .. group)
  if not held then return false end
  return tonumber(held)
end

-- The kept listing at `at` of the group board at `base` without `item`'s share (see above); the
-- newest one's previous ranks follow. Answers the listing's rows (0: the item counted for no group
-- there), and true when only the group's record was rewritten, its row left for the next call: its
-- record's members and the rows its move writes again weigh more than WORK_PER_CALL (never when
-- `whole`: a merge's own listing). Until then the listing reads as before the retraction.
local function listing_without(base, at, item, newest, whole)
  local key = counted_key(base, at)
  local held = redis.call('HMGET', key, ITEM .. item, MOVE .. item)
  local group, record, score, members = held[1] or held[2], nil, nil, 0
  if not group then return 0 end
  if held[1] then
    record, score, members = group_without(key, group, item)
  else
    score = pending_score(key, group, item)
    if score == false then return 0 end
  end
  local groups = base .. 'top'
  local listed = (score and order.listed(groups, score)) and score or nil
  local snap = base .. 'snap:' .. at
  local text = redis.call('GET', snap) or ''
  local count, old, was = listed_old(text, group)
  local move = move_of(text, count, group, listed, order.ascending(groups), old)
  local pending = not whole and members * MEMBER_WORK + move.rows * ROW_WORK > WORK_PER_CALL
  if record then group_written(key, group, item, record, score, pending) end
  if pending then return 0, true end
  local moved = moved_text(move, group, listed, old)
  redis.call('SET', snap, moved, 'KEEPTTL')
  if newest then previous_rewritten(base, group, was, listed, count, moved) end
  return count - (old and 1 or 0) + (listed and 1 or 0)
end

-- The item out of the kept listings of the group boards at `bases`: over a sharded member board, of
-- the item's shard's parts not merged yet (group_parts_lib) and of the merged listings (shard 0's,
-- also sent there by the retraction: group_history_retract). Answers the units left (0: not done).
local function listings_out(bases, record, item, budget, costs)
  for _, base in ipairs(bases) do
    budget = group_parts.item_out(base, item, budget, costs)
    if budget <= 0 then return 0 end
    local cursor = 'g:' .. base
    local after = redis.call('HGET', record, cursor)
    local index = base .. 'snaps'
    local newest = redis.call('ZRANGE', index, -1, -1)[1]
    for _, at in ipairs(redis.call('ZRANGE', index, after and '(' .. after or '-inf', '+inf', 'BYSCORE', 'LIMIT', 0, budget)) do
      local rows, pending = listing_without(base, at, item, at == newest)
      budget = budget - costs.listing - math.floor(rows / costs.rows)
      if pending then return 0 end
      redis.call('HSET', record, cursor, at)
      if budget <= 0 then return 0 end
    end
  end
  return budget
end

-- Hook item_history_out: `item` out of the kept listings of every group board over the member window
-- of `top_key`, after the record's cursors ("g:<base>": the last boundary rewritten), each listing
-- costing `costs.listing` units and one more per `costs.rows` rows rewritten. Answers the units left (0: not done).
local function item_history_out(cfg_key, top_key, record, item, budget, costs)
  local bases = group_of.GROUP_OF.bases_of(top_key)
  if not bases then return budget end
  return listings_out(bases, record, item, budget, costs)
end

-- Over a sharded member board, shard 0's record of the listing at `at` merged from the shards' parts
-- (group_history_store), written a page of groups a call: `groups` the next of the listing's groups in
-- its order, each { group, score, { item, score, ... } } as the merge counted them, those listed
-- recorded while they fit `room` members (see counted_recorded: the first that does not ends the
-- record). A merge's first page (`first`) starts the record afresh under its `token`, so a merge cut
-- short and begun again counts no group twice; a page of another token is refused (false: a later
-- merge of the boundary took the record). Until closed it expires in `lifetime_sec` (nil: a day).
local function counted_page(base, at, page, room, lifetime_sec)
  local key, groups = counted_key(base, at), base .. 'top'
  if page.first then
    redis.call('UNLINK', key)
    redis.call('HSET', key, NEXT, 0, COUNT, 0, TOKEN, page.token)
  elseif redis.call('HGET', key, TOKEN) ~= page.token then
    return false
  end
  local held = redis.call('HMGET', key, NEXT, COUNT, FULL)
  local recorded, count, full = tonumber(held[1]), tonumber(held[2]), held[3]
  for _, row in ipairs(page.groups) do
    if full then break end
    if order.listed(groups, tonumber(row[2])) then
      if count + #row[3] / 2 > room then
        full = '1'
        redis.call('HSET', key, FULL, 1)
      else
        recorded, count = recorded + 1, count + group_parts.record_rows(key, row[1], row[3])
      end
    end
  end
  redis.call('HSET', key, NEXT, recorded, COUNT, count)
  redis.call('EXPIRE', key, lifetime_sec or 86400)
  return true
end

-- The merged record at `at` closed under the rule: a retraction reads it from now on (the listing is kept).
local function counted_closed(base, at, rule, lifetime_sec)
  local key = counted_key(base, at)
  redis.call('HDEL', key, TOKEN, FULL)
  redis.call('HSET', key, NEXT, -1, RULE, rule)
  if lifetime_sec then redis.call('EXPIRE', key, lifetime_sec) else redis.call('PERSIST', key) end
end

-- The record of a kept listing goes with it (group_history_lib's trim, a dropped group board).
local function counted_dropped(base, at)
  redis.call('UNLINK', counted_key(base, at))
end

hooks.register_all('group_of', { 'item_history_out', item_history_out })
group_of.GROUP_OF.counted_recorded = counted_recorded
group_of.GROUP_OF.counted_dropped = counted_dropped
group_of.GROUP_OF.listings_out = listings_out
group_of.GROUP_OF.listing_without = listing_without
group_of.GROUP_OF.counted_page = counted_page
group_of.GROUP_OF.counted_closed = counted_closed
