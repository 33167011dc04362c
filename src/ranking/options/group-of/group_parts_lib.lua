-- module: group_parts
-- requires: archive, call_state, group_members, group_of, group_part_pages, order, snapshot, stored_windows, window
-- group_parts_lib: a group board's history over a sharded member board M. No call holds two shards'
-- keys, so no crossing sees a group whole: each shard's crossing of the member window W (hook
-- boundary_crossing, group_history_lib) records its part of the listing at the boundary, the
-- groups it holds members of with their best `top` listed members then (the shard's group zsets are
-- exact there, as an unsharded W's are), and a settle round of the group board (a read, the
-- scheduler's visit) merges the parts of each boundary into the listing shard 0 keeps, where the
-- group board's scores live (src/ranking/group-boards/group-history.ts, group_history_store.lua).
-- A listing is kept at a boundary only where every shard's part is known: recorded there, or empty
-- (the shard held no member of the group board then: attached later, <base>since); a calendar
-- period's from the parts of the shards that wrote in it. A rolling boundary keeps a listing where some
-- shard ran a call in the slot it ends (as an unsharded member board's, where the board ran one): a
-- shard's crossing records its part at the end of the slot it last ran in and, quiet, at the later
-- boundaries it ran no call before (its state there is its state then, less what left the window).
-- Keys, on each shard, base "<tag>:<W>%<G>:":
--   <base>since     string the slot start (unix s) of the shard's first membership change (before it,
--                   its part of every boundary is empty)
--   <base>parts     zset   at -> at: the boundaries whose parts the shard recorded, the newest
--                          PARTS_KEPT (a read or the scheduler's visit of the group board merges them
--                          every few seconds: an older part is dropped, its boundary keeps no listing)
--   <base>part:<at> hash   "g\31<group>" -> the group's best `top` listed members on the shard at the
--                          boundary ("\30<item>\31<score>" rows, best first; "\31x" after a score:
--                          retracted since, counted as held but worth nothing); "i\31<item>" -> its
--                          group; "o\31<k>" the k-th group recorded, "<members>\31<group>" (k from 1:
--                          the merge reads a part a page of groups at a time, read_page); "\29k" the
--                          groups recorded; "\29n" next group (sorted ids) to record (-1: done);
--                          "\29c" the members recorded; "\29o" 1: over its room (no listing kept at
--                          the boundary); "\29q" 1: quiet, the shard ran no call in the slot ending
--                          there (see quiet_view)
-- A part holds at most floor(rcap / (PARTS_KEPT x shards)) members, so the parts of all shards hold
-- at most MAX_RECORDED_MEMBERS_PER_BOARD (rcap), as shard 0's records of the merged listings do. A
-- group weighing more than a whole call is recorded over several, staged beside its part where no
-- reader reads it and written to the part by its last page (group_part_pages_lib).
-- KEYS: 0

local PARTS_KEPT = 4
local pages = group_part_pages
-- The crossing rows a recorded member weighs (group_part_pages_lib).
local PART_ROW_WEIGHT = pages.ROW_WEIGHT
local NEXT, COUNT, OVER, QUIET, GROUP, ITEM = '\29n', '\29c', '\29o', '\29q', pages.GROUP, pages.ITEM
local ORDINAL, GROUPS = pages.ORDINAL, '\29k'
local RETRACTED = '\31x'

local function part_key(base, at) return base .. 'part:' .. at end

-- Drops the part at `at` and what a group paged in it staged.
local function part_dropped(base, at)
  local key = part_key(base, at)
  redis.call('UNLINK', key, pages.staged_keys(key))
  redis.call('ZREM', base .. 'parts', at)
end

-- The members one shard's part of a listing may hold (see above).
local function part_room(cfg_key, base)
  local shards = tonumber(call_state.config_field(cfg_key, 'shards') or '1')
  return math.floor(tonumber(redis.call('GET', base .. 'rcap') or '0') / (PARTS_KEPT * shards))
end

-- The group's rows (item, score pairs, best first) into the hash `key` as a group's text and each
-- item's group: a part's, and a kept listing's record (group_history_out_lib). Answers the members.
local function record_rows(key, group, rows)
  local text, fields = {}, { GROUP .. group, '' }
  for i = 1, #rows, 2 do
    text[#text + 1] = archive.SNAP_ROW .. rows[i] .. archive.SNAP_FIELD .. rows[i + 1]
    fields[#fields + 1], fields[#fields + 2] = ITEM .. rows[i], group
  end
  fields[2] = table.concat(text)
  redis.call('HSET', key, unpack(fields))
  return #rows / 2
end

-- Where the record at `key` (a part, or a kept listing's record) goes on: its next group to record and
-- the members recorded, with the group board's rule and its `top`; nil once it is done or the group
-- board keeps no rule.
local function resumed(key, base)
  local held = redis.call('HMGET', key, NEXT, COUNT)
  local first = tonumber(held[1] or '0')
  if first < 0 then return nil end
  local rule = redis.call('GET', base .. 'rule')
  if not rule then return nil end
  return first, tonumber(held[2] or '0'), rule, tonumber(string.match(rule, '^(%d+) '))
end

-- A quiet boundary `at` of the rolling window of `member_top`: the shard ran no call since the slot it
-- last ran in, before it, so its state then is its state now, the slots that left the window by then
-- taken out as expiry takes them. Its aggregate (sum, max, min, last), the slots still indexed that
-- are not live in the slot ending at `at` (expired), those live there (live), oldest first.
local function quiet_view(cfg_key, member_top, at, interval_sec)
  local cfg_window, period = string.sub(member_top, #cfg_key - 2, -5), nil
  for _, w in ipairs(stored_windows.decode_windows(redis.call('HGET', cfg_key, 'windows'))) do
    if w.name == cfg_window then period = w.periodSec end
  end
  local slots_key = string.sub(member_top, 1, -4) .. 'slots'
  local view = { mode = call_state.config_field(cfg_key, 'aggregate') or 'sum', top_key = member_top, expired = {}, live = {} }
  local ranges = { expired = { '-inf', at - period - interval_sec }, live = { at - period, at - interval_sec } }
  for name, range in pairs(ranges) do
    for _, start in ipairs(redis.call('ZRANGE', slots_key, range[1], range[2], 'BYSCORE')) do
      view[name][#view[name] + 1] = window.slot_key_of(slots_key, start)
    end
  end
  return view
end

-- The listed `members` (name -> score at the mark) scored at the quiet boundary of `view`: a sum less
-- the expired slots' amounts, oldest first (as expiry subtracts them); a max / min / last record the
-- best, or the newest, over the live slots. Answers name -> score and the slot values read.
local function quiet_scores(members, names, view)
  local slots = #pages.quiet_slots(view)
  return pages.quiet_applied(view.mode == 'sum' and members or {}, names, view, 1, slots), slots * #names
end

-- Slot values one group's quiet rows may read (its members x the slots read): past it the part is
-- over its room (its boundary keeps no listing), so no crossing reads a whole window per member.
local QUIET_VALUES_MOST = 20000

-- The members of zset `key` the exceptions `ex` leave counted.
local function counted_members(key, ex)
  local size = redis.call('ZCARD', key)
  if not ex or #ex.list == 0 then return (ex and ex.only) and 0 or size end
  local present = 0
  for _, score in ipairs(redis.call('ZMSCORE', key, unpack(ex.list))) do
    if score then present = present + 1 end
  end
  return ex.only and present or size - present
end

-- The group's best `top` listed members at the quiet boundary of `view`, best first as score_page
-- orders them (ties by id, reversed on a descending board), past its exceptions `ex`: [member,
-- score, ...] (nil: more than QUIET_VALUES_MOST to read) and the rows read (its members, their values).
local function quiet_rows(key, top, ex, view)
  local held, members, names = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES'), {}, {}
  for i = 1, #held, 2 do
    if pages.counts(ex, held[i]) then members[held[i]], names[#names + 1] = tonumber(held[i + 1]), held[i] end
  end
  if #names == 0 then return {}, #held / 2 end
  if #names * #(view.mode == 'sum' and view.expired or view.live) > QUIET_VALUES_MOST then return nil, #held / 2 end
  local scores, read = quiet_scores(members, names, view)
  local rows, ascending = {}, order.ascending(key)
  for _, name in ipairs(names) do
    local score = scores[name]
    if pages.quiet_listed(view, score) then rows[#rows + 1] = { name, score } end
  end
  table.sort(rows, function(x, y)
    if x[2] ~= y[2] then return (x[2] < y[2]) == ascending end
    return (x[1] < y[1]) == ascending
  end)
  local flat = {}
  for i = 1, math.min(top, #rows) do flat[2 * i - 1], flat[2 * i] = rows[i][1], string.format('%.17g', rows[i][2]) end
  return flat, #held / 2 + read
end

-- The rows reading a group's part at `group_key` takes at most, before they are read: its members and
-- their slot values at a quiet boundary `view` (quiet_rows), else its best `top` members and the
-- exceptions `ex` passed on the way (group_members.best_rows).
local function part_reads(group_key, top, ex, view)
  local size = redis.call('ZCARD', group_key)
  if view then return size * (1 + #(view.mode == 'sum' and view.expired or view.live)) end
  if not ex then return math.min(size, top) end
  return math.min(size, ex.only and #ex.list or top + #ex.list)
end

-- One group of the part at `key` recorded (`part`: its top, exceptions ex, quiet view, room, and the
-- members and groups recorded before, count and held, updated): charged before it is recorded, and one
-- heavier than a whole call recorded over several (group_part_pages_lib). False: left for the next call;
-- nil: the part is over its room.
local function group_recorded(key, group, group_key, part)
  local reads = part_reads(group_key, part.top, part.ex, part.view)
  if pages.heavy(reads) then
    if part.view and counted_members(group_key, part.ex) * #pages.quiet_slots(part.view) > QUIET_VALUES_MOST then return nil end
    local members = pages.paged(key, group, group_key, part)
    if not members then return members end
    if members > 0 then part.count, part.held = part.count + members, part.held + 1 end
    return true
  end
  if not snapshot.crossing_fits(PART_ROW_WEIGHT * reads + 1) then return false end
  local rows, read
  if part.view then rows, read = quiet_rows(group_key, part.top, part.ex, part.view) else rows, read = group_members.best_rows(group_key, part.top, part.ex) end
  snapshot.crossing_work(PART_ROW_WEIGHT * read + 1)
  if not rows or part.count + #rows / 2 > part.room then return nil end
  if #rows > 0 then
    part.count, part.held = part.count + record_rows(key, group, rows), part.held + 1
    redis.call('HSET', key, ORDINAL .. part.held, (#rows / 2) .. '\31' .. group)
  end
  return true
end

-- Records the shard's part of the listing at `at` from the first group not recorded yet, within the
-- call's crossing rows (group_recorded): true once done (or over its room). `member_top`: W's results on
-- the shard; `quiet`: `at` is a quiet boundary (quiet_view; W's interval `interval_sec`), else the
-- shard's state now.
local function recorded(cfg_key, base, at, member_top, quiet, interval_sec)
  local key = part_key(base, at)
  local first, count, _, top = resumed(key, base)
  if not first then return true end
  local view = quiet and quiet_view(cfg_key, member_top, at, interval_sec)
  if view then redis.call('HSET', key, QUIET, 1) end
  local index = base .. 'parts'
  redis.call('ZADD', index, at, at)
  for _, old in ipairs(redis.call('ZRANGE', index, 0, -(PARTS_KEPT + 1))) do part_dropped(base, old) end
  local held = redis.call('HGET', key, GROUPS)
  if first > 0 and not held then
    -- Begun before its groups were numbered: not readable a page at a time (read_parts), kept as over.
    redis.call('HSET', key, OVER, 1, NEXT, -1)
    return true
  end
  -- Every slot left the window by then: the part is empty.
  if view and #view.live == 0 then first = math.huge end
  local part = { top = top, ex = group_members.exceptions_of(member_top), view = view,
    room = part_room(cfg_key, base), count = count, held = tonumber(held or '0') }
  local groups = redis.call('HKEYS', base .. 'groups')
  table.sort(groups)
  for i = first + 1, #groups do
    local done = group_recorded(key, groups[i], group_of.GROUP_OF.group_key(base, groups[i]), part)
    if done == false then
      redis.call('HSET', key, NEXT, i - 1, COUNT, part.count, GROUPS, part.held)
      return false
    end
    if done == nil then
      redis.call('HSET', key, OVER, 1)
      break
    end
  end
  redis.call('HSET', key, NEXT, -1, COUNT, part.count, GROUPS, part.held)
  return true
end

-- A shard's crossing from the slot starting at `mark` (hook boundary_crossing, group_history_lib): its
-- part at the end of that slot, then on a rolling window (`interval_sec`; nil: a calendar period's,
-- at `mark`) its quiet parts at the later boundaries to the current slot's start, the newest
-- PARTS_KEPT - 1 of them (the index keeps PARTS_KEPT). True once every one is recorded.
local function crossed(cfg_key, base, mark, interval_sec, member_top)
  if not interval_sec then return recorded(cfg_key, base, mark, member_top) end
  if not recorded(cfg_key, base, mark + interval_sec, member_top) then return false end
  local current = window.current_slot(math.floor(call_state.now_ms() / 1000), interval_sec)
  for at = math.max(mark + 2 * interval_sec, current - (PARTS_KEPT - 2) * interval_sec), current, interval_sec do
    if not recorded(cfg_key, base, at, member_top, true, interval_sec) then return false end
  end
  return true
end

-- The shard's recorded parts (done ones only), oldest first: { at, over (0|1), groups recorded, quiet
-- (0|1) } each, and since (-1: the shard never held a member). Their groups: read_page.
local function read_parts(base)
  local parts = {}
  for _, at in ipairs(redis.call('ZRANGE', base .. 'parts', 0, -1)) do
    local held = redis.call('HMGET', part_key(base, at), NEXT, OVER, GROUPS, QUIET)
    -- A part recorded before its groups were numbered ("\29k") cannot be read a page at a time: as
    -- one over its room, its boundary keeps no listing.
    local over = (held[2] or not held[3]) and 1 or 0
    if held[1] == '-1' then parts[#parts + 1] = { tonumber(at), over, tonumber(held[3] or '0'), held[4] and 1 or 0 } end
  end
  return parts, tonumber(redis.call('GET', base .. 'since') or '-1')
end

-- The groups of the part at `at` after the `after`-th recorded, while their members fit `rows` (at
-- least one group): [[group, [item, score, retracted (0|1), ...]], ...], and the last group answered
-- (-1: the part's last, or no such part).
local function read_page(base, at, after, rows)
  local key, groups, taken = part_key(base, at), {}, 0
  local last = tonumber(redis.call('HGET', key, GROUPS) or '0')
  for k = after + 1, last do
    local size, group = string.match(redis.call('HGET', key, ORDINAL .. k), '^(%d+)\31(.*)$')
    if #groups > 0 and taken + tonumber(size) > rows then return groups, k - 1 end
    local members = {}
    for item, score, mark in string.gmatch(redis.call('HGET', key, GROUP .. group) or '', '\30([^\30\31]*)\31([^\30\31]*)(\31?x?)') do
      members[#members + 1], members[#members + 2], members[#members + 3] = item, score, mark == RETRACTED and 1 or 0
    end
    groups[#groups + 1], taken = { group, members }, taken + tonumber(size)
  end
  return groups, -1
end

-- Drops the shard's parts at or before `upto` (merged, or never to be).
local function dropped(base, upto)
  for _, at in ipairs(redis.call('ZRANGE', base .. 'parts', '-inf', upto, 'BYSCORE')) do part_dropped(base, at) end
end

-- The item's rows in the shard's parts marked retracted (the merge then counts them as held, worth
-- nothing: the member past `top` does not move in). Answers the units left.
local function item_out(base, item, budget, costs)
  for _, at in ipairs(redis.call('ZRANGE', base .. 'parts', 0, -1)) do
    local key = part_key(base, at)
    local group = redis.call('HGET', key, ITEM .. item)
    if group then
      local rows = redis.call('HGET', key, GROUP .. group)
      local pattern = '(\30' .. string.gsub(item, '%W', '%%%0') .. '\31[^\30\31]*)'
      if rows then
        redis.call('HSET', key, GROUP .. group, (string.gsub(rows, pattern, '%1' .. RETRACTED, 1)))
      else
        -- A group paged over calls keeps its text apart till its last page (group_part_pages_lib).
        local _, text = pages.staged_keys(key)
        local staged = redis.call('GET', text)
        if staged then redis.call('SET', text, (string.gsub(staged, pattern, '%1' .. RETRACTED, 1))) end
      end
      redis.call('HDEL', key, ITEM .. item)
      budget = budget - costs.listing
    end
  end
  return budget
end

-- A retraction racing a merge: the merge may read a part before the retraction's step on the item's
-- shard marks it, and store the listing after group_history_retract rewrote shard 0's listings. So
-- that step notes the item on shard 0 (<base>rtr, zset item -> its note, kept RETRACTIONS_KEPT_MS:
-- far longer than a merge runs), each note scored past every one before it, and a listing the merge
-- stores is then rewritten without each item noted after the newest note when it began (newest_note,
-- read on shard 0 before it read any part; the merge's own instance's clock never compared with the
-- retraction's). One noted before that reached the parts first, and any events of the item after it
-- are the listing's own. The merge's first call on shard 0 names the group board there (merge_began)
-- before it reads a part, so a retraction's step finds its base even before shard 0 holds a member
-- or a listing.
local RETRACTIONS_KEPT_MS = 3600 * 1000

-- The score of the newest note at `base` (0: none).
local function newest_note(base)
  return tonumber(redis.call('ZRANGE', base .. 'rtr', -1, -1, 'WITHSCORES')[2] or '0')
end

-- Notes the retraction of `item` at `now_ms` for the group board at `base` (shard 0's): scored its
-- step's time, or past the newest note's (an instance's clock behind another's).
local function retraction_noted(base, item, now_ms)
  local key = base .. 'rtr'
  redis.call('ZADD', key, 'GT', math.max(now_ms, newest_note(base) + 1), item)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now_ms - RETRACTIONS_KEPT_MS)
  redis.call('PEXPIRE', key, RETRACTIONS_KEPT_MS)
end

-- The merge's first call on shard 0 (`cfg_key`) of the group board `board` over `window` (at most
-- `most` group boards over the member board): names the group board there, as its kept listings do,
-- and answers the newest note the merge then applies the ones after (retractions_applied).
local function merge_began(cfg_key, base, window, board, most)
  group_of.GROUP_OF.attach(cfg_key, window, board, most)
  return newest_note(base)
end

-- The listing just stored at `at` at `base` without the items noted after `since` (merge_began's;
-- group_history_out_lib's rewrite: one HGET for an item its record does not name). Answers the items.
local function retractions_applied(base, at, newest, since)
  local noted = redis.call('ZRANGE', base .. 'rtr', '(' .. since, '+inf', 'BYSCORE')
  for _, item in ipairs(noted) do group_of.GROUP_OF.listing_without(base, at, item, newest, true) end
  return #noted
end

-- The shard's first membership change of the group board at `base`, in the slot starting at `slot`.
local function attached(base, slot)
  redis.call('SET', base .. 'since', slot, 'NX')
end

group_parts.crossed = crossed
group_parts.read_parts = read_parts
group_parts.read_page = read_page
group_parts.dropped = dropped
group_parts.item_out = item_out
group_parts.attached = attached
group_parts.retraction_noted = retraction_noted
group_parts.retractions_applied = retractions_applied
group_parts.merge_began = merge_began
group_parts.record_rows = record_rows
group_parts.resumed = resumed
