-- module: group_part_pages
-- requires: archive, order, snapshot
-- group_part_pages_lib: a group of a shard's part of a group board's listing (group_parts_lib) whose
-- reads weigh more than a whole crossing call (snapshot_lib's CROSSING_ROWS: over ~500 members, or a
-- quiet group's members and slot values), recorded over several calls, a page a call within the call's
-- crossing rows, as a listing of many rows is (snaprows' PAGED). A quiet group's
-- members are first scored at its boundary into <part>:hz, a page of members (or of one member's slot
-- values) a call; then its best `top` rows are read from its zset (or from <part>:hz), a page a call:
-- each row's item field goes to the part, its text to <part>:ht. No reader reads either key, nor the
-- group before its text: the merge reads a part's groups by their ordinals (read_page), which the last
-- page writes with the text, and a part only once it is done, so it sees the group whole or not at
-- all. Each call leaves the boundary to the next (the member window takes nothing new meanwhile: its
-- results, the memberships and the exceptions stay as they were at the boundary).
-- Fields of <part> while a group is paged: "\29a" members scored, "\29s" slot values of the next member
-- applied (its score so far in <part>:hz), "\29r" ranks read, "\29m" rows kept.
-- KEYS: 0

local SCORED, SLOTS, READ, KEPT = '\29a', '\29s', '\29r', '\29m'
local GROUP, ITEM, ORDINAL = 'g\31', 'i\31', 'o\31'
-- The crossing rows a member read (or a quiet member's slot value) weighs: read, then written as a hash
-- field and a row of its group's text (about twice a snapshot row's: bench/group-history-instructions.ts).
local ROW_WEIGHT = 2
-- Fewest reads a page takes in a call that took other work first (fewer: left for the next call).
local PAGE_LEAST = 50
-- Redis 7.0 keeps a small hash or zset (up to 128 entries: hash-/zset-max-listpack-entries) as one
-- listpack and adds to it an entry at a time, each found and inserted by a scan, even from one variadic
-- HSET / ZADD (7.0 sizes a new key by its first entry alone): a fresh part's first member fields and a
-- fresh <part>:hz's first scores cost up to about a row's weight more each (bench/group-part-pages-instructions.ts:
-- 207 fields 5.46 M, a zset's first 128 members 1.85 M), so each of a key's first LISTPACK_ENTRIES
-- entries a page writes weighs LISTPACK_WEIGHT crossing rows more.
local LISTPACK_ENTRIES, LISTPACK_WEIGHT = 128, 2

-- The keys a paged group is staged in beside its part `key`: its quiet scores, its text so far.
local function staged_keys(key) return key .. ':hz', key .. ':ht' end

-- Drops a paged group's staged keys and fields (recorded, over its room, or begun afresh).
local function cleared(key)
  redis.call('UNLINK', staged_keys(key))
  redis.call('HDEL', key, SCORED, SLOTS, READ, KEPT)
end

-- Whether a group of `reads` (group_parts' part_reads) weighs more than a whole crossing call.
local function heavy(reads) return ROW_WEIGHT * reads + 1 > snapshot.CROSSING_ROWS end

-- The crossing rows this call may still take, and whether it took none yet.
local function work_left()
  local left = snapshot.crossing_work(0)
  return left, left >= snapshot.CROSSING_ROWS
end

-- The crossing rows `n` entries written into a key of `size` entries weigh, each `per_entry` (the key's
-- first LISTPACK_ENTRIES weighing LISTPACK_WEIGHT more).
local function written_work(n, per_entry, size)
  return per_entry * n + LISTPACK_WEIGHT * math.max(0, math.min(n, LISTPACK_ENTRIES - size))
end

-- The most entries written into a key of `size` entries, each `per_entry`, that `work` crossing rows take.
local function entries_within(work, per_entry, size)
  local small = math.max(0, LISTPACK_ENTRIES - size)
  local n = math.floor(work / (per_entry + LISTPACK_WEIGHT))
  if n < small then return n end
  return math.floor((work - LISTPACK_WEIGHT * small) / per_entry)
end

-- Whether the exceptions `ex` (nil: none) leave `name` counted.
local function counts(ex, name)
  return not ex or (ex.only and ex.items[name]) or (not ex.only and not ex.items[name]) or false
end

-- A slot hash value's score: a sum's, a max / min record's, a last record's "<at_ms>:<score>".
local function slot_score(value)
  return tonumber(string.match(value, '([^:]*)$'))
end

-- The slots a quiet `view` (group_parts' quiet_view) reads for each member.
local function quiet_slots(view) return view.mode == 'sum' and view.expired or view.live end

-- `scores` (name -> score so far: a sum's from its score at the mark) with the slots first..last of the
-- quiet `view` applied to `names`: a sum less the expired slots' amounts, oldest first (as expiry
-- subtracts them); a max / min / last record the best, or the newest, over the live slots.
local function quiet_applied(scores, names, view, first, last)
  local sum, slots = view.mode == 'sum', quiet_slots(view)
  for s = first, last do
    local values = redis.call('HMGET', slots[s], unpack(names))
    for j, name in ipairs(names) do
      local v, held = values[j] and slot_score(values[j]), scores[name]
      if v and sum then
        scores[name] = held - v
      elseif v and (held == nil or view.mode == 'last' or (view.mode == 'max') == (v > held)) then
        scores[name] = v
      end
    end
  end
  return scores
end

-- Whether a quiet score is listed (a member scoring 0, or below the listing's floor, counts for nothing).
local function quiet_listed(view, score)
  return score ~= nil and score ~= 0 and order.listed(view.top_key, score)
end

-- Members index..index + n - 1 of the group's zset `group_key` scored at the quiet `view` into `staged`.
local function quiet_page(staged, group_key, view, ex, index, n)
  local held, names, scores = redis.call('ZRANGE', group_key, index, index + n - 1, 'WITHSCORES'), {}, {}
  for i = 1, #held, 2 do
    if counts(ex, held[i]) then
      names[#names + 1] = held[i]
      if view.mode == 'sum' then scores[held[i]] = tonumber(held[i + 1]) end
    end
  end
  if #names > 0 then quiet_applied(scores, names, view, 1, #quiet_slots(view)) end
  local args = {}
  for _, name in ipairs(names) do
    if quiet_listed(view, scores[name]) then args[#args + 1], args[#args + 2] = scores[name], name end
  end
  if #args > 0 then redis.call('ZADD', staged, unpack(args)) end
end

-- Member `index` of `group_key` alone, its slot values of the quiet `view` after the `applied`-th, at
-- most `most` of them (its score so far kept in `staged`): the values applied after it (0: scored).
local function member_slots(staged, group_key, view, ex, index, applied, most)
  local row = redis.call('ZRANGE', group_key, index, index, 'WITHSCORES')
  local name, scores, slots = row[1], {}, #quiet_slots(view)
  if not counts(ex, name) then return 0 end
  if applied > 0 then
    scores[name] = tonumber(redis.call('ZSCORE', staged, name))
  elseif view.mode == 'sum' then
    scores[name] = tonumber(row[2])
  end
  local last = math.min(slots, applied + most)
  quiet_applied(scores, { name }, view, applied + 1, last)
  if last < slots and scores[name] then redis.call('ZADD', staged, scores[name], name) end
  if last < slots then return last end
  if quiet_listed(view, scores[name]) then redis.call('ZADD', staged, scores[name], name) else redis.call('ZREM', staged, name) end
  return 0
end

-- Scores the group's members (zset `group_key`) at the quiet boundary of `view` into <part>:hz, from
-- where earlier calls stopped, within the call's reads: whole members a page, or one member's slot
-- values over calls when they weigh more than a call. True once every member is scored.
local function quiet_scored(key, group_key, view, ex)
  local held = redis.call('HMGET', key, SCORED, SLOTS)
  local done, applied = tonumber(held[1] or '0'), tonumber(held[2] or '0')
  local size, slots, staged = redis.call('ZCARD', group_key), #quiet_slots(view), staged_keys(key)
  while done < size do
    local work, fresh = work_left()
    local left, scored = math.floor(work / ROW_WEIGHT), redis.call('ZCARD', staged)
    local whole = math.min(size - done, entries_within(work, ROW_WEIGHT * (1 + slots), scored))
    if applied == 0 and whole > 0 and (fresh or whole >= math.min(PAGE_LEAST, size - done)) then
      quiet_page(staged, group_key, view, ex, done, whole)
      snapshot.crossing_work(written_work(whole, ROW_WEIGHT * (1 + slots), scored))
      done = done + whole
    elseif left > 1 and (fresh or applied > 0) then
      local before = applied
      applied = member_slots(staged, group_key, view, ex, done, applied, left - 1)
      snapshot.crossing_work(ROW_WEIGHT * (1 + (applied > 0 and applied or slots) - before))
      if applied == 0 then done = done + 1 end
    else
      break
    end
  end
  redis.call('HSET', key, SCORED, done, SLOTS, applied)
  return done >= size
end

-- Reads the group's best rows from `source` (its zset, or <part>:hz for a quiet group; `keep`: whether
-- a member counts) from where earlier calls stopped, within the call's reads: each row's item field
-- into the part, its text appended to <part>:ht. Answers the rows kept once `top` are or the source is
-- read, false when left for the next call, nil past `room` (the members the part may still take).
local function rows_read(key, group, source, ascending, keep, top, room)
  local held = redis.call('HMGET', key, READ, KEPT)
  local read, kept, total = tonumber(held[1] or '0'), tonumber(held[2] or '0'), redis.call('ZCARD', source)
  local _, text = staged_keys(key)
  while kept < top and read < total do
    local work, fresh = work_left()
    local written = redis.call('HLEN', key)
    local n = math.min(entries_within(work, ROW_WEIGHT, written), top - kept, total - read)
    if n < 1 or (not fresh and n < math.min(PAGE_LEAST, top - kept, total - read)) then
      redis.call('HSET', key, READ, read, KEPT, kept)
      return false
    end
    local page = redis.call(ascending and 'ZRANGE' or 'ZREVRANGE', source, read, read + n - 1, 'WITHSCORES')
    local fields, rows = {}, {}
    for i = 1, #page, 2 do
      if kept < top and keep(page[i]) then
        kept, fields[#fields + 1], fields[#fields + 2] = kept + 1, ITEM .. page[i], group
        rows[#rows + 1] = archive.SNAP_ROW .. page[i] .. archive.SNAP_FIELD .. page[i + 1]
      end
    end
    read = read + n
    snapshot.crossing_work(written_work(n, ROW_WEIGHT, written))
    if kept > room then return nil end
    if #fields > 0 then
      redis.call('HSET', key, unpack(fields))
      redis.call('APPEND', text, table.concat(rows))
    end
  end
  redis.call('HSET', key, READ, read, KEPT, kept)
  return kept
end

-- Records the heavy group `group` (zset `group_key`) of the part at `key` a page a call: false while
-- left for the next call, else the members recorded (0: none listed; its text and its ordinal, the
-- `held`-th group's next, written now), or nil past the part's `room` (less `count`, recorded before).
-- `top`, `ex`, `view` as group_parts' recorded reads a group.
local function paged(key, group, group_key, spec)
  local began = redis.call('HMGET', key, SCORED, READ)
  if not began[1] and not began[2] then redis.call('UNLINK', staged_keys(key)) end
  if spec.view and not quiet_scored(key, group_key, spec.view, spec.ex) then return false end
  local source, keep = group_key, function(name) return counts(spec.ex, name) end
  if spec.view then source, keep = staged_keys(key), function() return true end end
  local kept = rows_read(key, group, source, order.ascending(group_key), keep, spec.top, spec.room - spec.count)
  if kept == false then return false end
  if kept and kept > 0 then
    local _, text = staged_keys(key)
    redis.call('HSET', key, GROUP .. group, redis.call('GET', text), ORDINAL .. (spec.held + 1), kept .. '\31' .. group)
  end
  cleared(key)
  snapshot.crossing_work(1)
  return kept
end

group_part_pages.GROUP = GROUP
group_part_pages.ITEM = ITEM
group_part_pages.ORDINAL = ORDINAL
group_part_pages.ROW_WEIGHT = ROW_WEIGHT
group_part_pages.staged_keys = staged_keys
group_part_pages.heavy = heavy
group_part_pages.quiet_slots = quiet_slots
group_part_pages.quiet_applied = quiet_applied
group_part_pages.quiet_listed = quiet_listed
group_part_pages.counts = counts
group_part_pages.paged = paged
