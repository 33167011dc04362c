-- module: tiebreak
-- requires: call_state, hooks, keyspace, ties
-- tiebreak_lib: `tiebreak: { order }` on a max / min / last board, a board option
-- (src/ranking/options/tiebreak/). A record is the pair (score, tiebreak): aggregate_lib keeps the best
-- pair (it asks the hook `tiebreak` for the order and the window's held tiebreak) and tells every change
-- of it to results_changed with the tiebreak; this module keeps the pair's order for the reads (hooks
-- page, position, mark_of, ahead, rank, append_marks, as ties_lib does for `ties: first`).
-- KEYS: 0
-- Keys, siblings of a window's results zset "<base>top" (same hash tag):
--   <base>tborder  zset  every member scored 0: <score key><mark><item> for every item the window holds,
--                        so its byte order (ZREVRANGE, ZLEXCOUNT; ZRANGE on an `order: asc` board) is
--                        the board order of pairs
--   <base>tbkept   hash  item -> its <score key><mark> (what its member starts with)
-- Config hash fields: tiebreak ("asc" | "desc"; absent: the option is off), order (score_order_lib).
-- A score key is the score (an integer, |s| <= 10^15) plus 10^15 in TB.WIDTH fixed-width digits; a mark
-- the tiebreak the same way, following the board's order as the score key does: on a board of the
-- default order greater for the better tiebreak (desc: t + 10^15, asc: 10^15 - t), on an `order: asc`
-- board smaller for it (the other way round): both in [0, 2 x 10^15], exact in a double. So the pair
-- order of an `order: asc` board is the exact reverse of a desc board's with the other tiebreak order:
-- ZREVRANGE (ZRANGE) lists the best pair first and equal pairs in descending (ascending) byte order of
-- item id, as Redis lists equal scores; the items ahead of a pair are one ZLEXCOUNT. Across shards rows
-- carry their mark (ScoredItem.tie): the merge and every count compare (score, mark) in the board's
-- order, so no number combines the two. Ranks are competition ranks on the pair.
-- With `ties: first` ("most points, then fastest time, then whoever got there first") the strict order
-- is kept here, in the same zset: a member is <score key><mark><tie mark><item>, the tie mark ties_lib's
-- (ties.drawn_mark: its sequence, on a sharded board its time, sequence and shard; one mark for the
-- items a drain moves), drawn when the item's pair changes and kept while it does not. Its digits are
-- turned (9 - d) on an `order: asc` board, so that ZRANGE lists the earlier first as ZREVRANGE does the
-- inverted mark. ties_lib keeps no order of its own then (one order, not two to keep in step: a write
-- costs one mark's draw more than a tiebreak alone), and answers only `strict`. Ranks are then places
-- (ZREVRANK / ZRANK); a row's mark across shards is its whole member but the score key, unique, so the
-- merge (byte order of marks) and every count ahead of it (one ZLEXCOUNT to that member) are exact; a
-- bare pair mark (a GET …/rank record) counts the items holding that pair ahead: they reached it first.

local TB = { LIMIT = 1000000000000000, WIDTH = 16 }
-- Above every member of a prefix: item ids are UTF-8, which never holds the byte 0xFF.
local AFTER_ANY_ITEM = '\255'

local cfg_key_of_top = call_state.cfg_key_of_top
call_state.config_field_add('tiebreak', 'tiebreak')

-- Each config hash's setting asked in this call (call_state.call_cache).
local known = { seq = 0, by = {} }

local FLIPPED = { asc = 'desc', desc = 'asc' }

-- The board's setting, or false when the option is off: `order` the tiebreak's ("asc" | "desc"),
-- `marks` the order its marks are kept in (the other one on an `order: asc` board), `ascending` the
-- board's order (lower scores first).
local function setting(top_key)
  local cfg_key = cfg_key_of_top(top_key)
  local by = call_state.call_cache(known)
  local found = by[cfg_key]
  if found == nil then
    local stored = call_state.config_field(cfg_key, 'tiebreak')
    found = false
    if stored == 'asc' or stored == 'desc' then
      local ascending = call_state.config_field(cfg_key, 'order') == 'asc'
      found = { order = stored, marks = ascending and FLIPPED[stored] or stored, ascending = ascending, strict = false }
      if call_state.config_field(cfg_key, 'ties') == 'first' then
        found.strict, found.tie_width = true, ties.mark_width(top_key)
      end
      -- Where the item id starts in a member: after the score key, the mark and (strict) the tie mark.
      found.width = 2 * TB.WIDTH + (found.tie_width or 0)
    end
    by[cfg_key] = found
  end
  return found
end

local function tiebreak_order(top_key)
  local kept = setting(top_key)
  return kept and kept.order
end

local kept_key = keyspace.sibling_of('top', 'tbkept')
local order_key = keyspace.sibling_of('top', 'tborder')

local function digits(value)
  return string.format('%0' .. TB.WIDTH .. '.0f', value)
end

-- The mark of tiebreak `tb` (a number) kept in `order` (a setting's `marks`), and back.
local function mark_of_tiebreak(order, tb)
  return digits(order == 'desc' and TB.LIMIT + tb or TB.LIMIT - tb)
end

local function tiebreak_of_mark(order, mark)
  local value = tonumber(mark)
  return string.format('%.0f', order == 'desc' and value - TB.LIMIT or TB.LIMIT - value)
end

-- What the member of the pair (score, mark) starts with.
local function pair_prefix(score, mark)
  return digits(TB.LIMIT + score) .. mark
end

-- Hook tiebreak: the order and the item's tiebreak held in the window (nil: not held), or nil when off.
local function tiebreak_hook(top_key, item)
  local kept = setting(top_key)
  if not kept then return nil end
  local prefix = redis.call('HGET', kept_key(top_key), item)
  return kept.order, prefix and tiebreak_of_mark(kept.marks, string.sub(prefix, TB.WIDTH + 1, 2 * TB.WIDTH)) or nil
end

-- A tie mark (ties_lib's, earlier greater) as kept on a board of the setting `kept`: on an `order: asc`
-- board, whose pairs are read ascending, each digit turned (9 - d), so that the earlier is smaller.
local function kept_tie(kept, tie)
  if not kept.ascending then return tie end
  return (string.gsub(tie, '%d', function(d) return string.char(105 - string.byte(d)) end))
end

-- What follows the pair in the member of an item whose pair in the window becomes the prefix `pair`:
-- '' unless strict; there its tie mark, kept when the pair is the one it held (`old`, its prefix
-- before), else a new one (ties.drawn_mark) as the record that reached the pair last.
local function tie_part(kept, top_key, pair, old)
  if not kept.strict then return '' end
  local width = 2 * TB.WIDTH
  local old_tie = old and string.sub(old, width + 1)
  if old and string.sub(old, 1, width) == pair then return old_tie end
  -- The drain's shared mark is kept only by a later record: compared as ties_lib draws them.
  return kept_tie(kept, ties.drawn_mark(top_key, old_tie and kept_tie(kept, old_tie)))
end

-- Hook results_changed: the item's pair in the window is now (score, tb); tb nil: it left (or a change
-- that names no tiebreak: it keeps the one it held, 0 when none).
local function tiebreak_changed(top_key, item, score, tb)
  local kept_setting = setting(top_key)
  if not kept_setting then return end
  local order = kept_setting.marks
  local kept, sorted = kept_key(top_key), order_key(top_key)
  local old = redis.call('HGET', kept, item)
  if old then redis.call('ZREM', sorted, old .. item) end
  if tb == nil then
    if not redis.call('ZSCORE', top_key, item) then
      if old then redis.call('HDEL', kept, item) end
      return
    end
    tb = old and tiebreak_of_mark(order, string.sub(old, TB.WIDTH + 1, 2 * TB.WIDTH)) or '0'
  end
  local pair = pair_prefix(score, mark_of_tiebreak(order, tonumber(tb)))
  local prefix = pair .. tie_part(kept_setting, top_key, pair, old)
  redis.call('ZADD', sorted, 0, prefix .. item)
  redis.call('HSET', kept, item, prefix)
end

-- The item's mark in the window ('': not held), or nil when off. Strict: its whole member but the
-- score key (<mark><tie mark><item>), unique, for the merge and the other shards' counts.
local function mark_hook(top_key, item)
  local kept = setting(top_key)
  if not kept then return nil end
  local prefix = redis.call('HGET', kept_key(top_key), item)
  if not prefix then return '' end
  return string.sub(prefix, TB.WIDTH + 1) .. (kept.strict and item or '')
end

-- Items ahead of (score, mark): a better score, or an equal one and a better mark (a longer `mark`,
-- <mark><item>, a whole member's end: those sorting ahead of that member, read_neighbours' place). One
-- ZLEXCOUNT; a score between integers (a rank read's) has no equal: the items scoring better. Strict,
-- a pair's mark alone is a record reaching that pair now: the items holding it are ahead too.
local function ahead_hook(top_key, score, mark)
  if mark == '' then return nil end
  local kept = setting(top_key)
  if not kept then return nil end
  local exact = string.format('%.17g', score)
  local arriving = kept.strict and #mark == TB.WIDTH
  if kept.ascending then
    if score ~= math.floor(score) then return redis.call('ZCOUNT', top_key, '-inf', '(' .. exact) end
    -- Every member of the pair (score, mark) sorts above <score key><mark>: the better pairs sort below.
    local below = pair_prefix(score, mark) .. (arriving and AFTER_ANY_ITEM or '')
    return redis.call('ZLEXCOUNT', order_key(top_key), '-', '(' .. below)
  end
  if score ~= math.floor(score) then return redis.call('ZCOUNT', top_key, '(' .. exact, '+inf') end
  local bound = pair_prefix(score, mark) .. ((#mark > TB.WIDTH or arriving) and '' or AFTER_ANY_ITEM)
  return redis.call('ZLEXCOUNT', order_key(top_key), '(' .. bound, '+')
end

-- Integers 0..LISTING_ROWS as text, negated, and 000..999 (the groups of three digits after the first),
-- written once as the library loads: Lua writes a number's text with a sprintf, about 2 000
-- instructions, and a listing of 1 000 rows wrote one a row (issue #45). (`'' .. n` is tostring's text:
-- a library's load reaches no global function.)
local LISTING_ROWS = 1000
local TEXTS, NEGATED, GROUPS = {}, {}, {}
for n = 0, LISTING_ROWS do TEXTS[n], NEGATED[n] = '' .. n, '-' .. n end
for n = 0, 999 do GROUPS[n] = (n < 10 and '00' or n < 100 and '0' or '') .. n end

-- The text string.format('%.0f') writes for the integer `value` (|value| <= TB.LIMIT < 2^50, so each
-- floor of a division by 1000 is exact), from the tables.
local function integer_text(value)
  local magnitude, text = value < 0 and -value or value, ''
  while magnitude >= 1000 do
    local high = math.floor(magnitude / 1000)
    text = GROUPS[magnitude - high * 1000] .. text
    magnitude = high
  end
  return (value < 0 and '-' or '') .. TEXTS[magnitude] .. text
end

-- The score of a score key (a member's first TB.WIDTH digits) as text (its string coerced: one strtod).
local function score_text(score_key)
  return integer_text(score_key - TB.LIMIT)
end

-- Positions first..last of the pair order as ZREVRANGE WITHSCORES answers them (item, score, ...),
-- each row's mark added to `marks` (every shard count: rows rank by their marks), or nil when off.
-- Equal scores are adjacent: a run of them shares one text.
local function page_hook(top_key, first, last, marks)
  local kept = setting(top_key)
  if not kept then return nil end
  local members = redis.call(kept.ascending and 'ZRANGE' or 'ZREVRANGE', order_key(top_key), first, last)
  local page, width, held, score = {}, kept.width, nil, nil
  for i, member in ipairs(members) do
    if marks then marks[#marks + 1] = string.sub(member, TB.WIDTH + 1, kept.strict and -1 or width) end
    local score_key = string.sub(member, 1, TB.WIDTH)
    if score_key ~= held then held, score = score_key, score_text(score_key) end
    page[2 * i - 1], page[2 * i] = string.sub(member, width + 1), score
  end
  return page
end

-- The item's 0-based place in the pair order (nil: not held), or nil when off.
local function position_hook(top_key, item)
  local kept = setting(top_key)
  if not kept then return nil end
  local prefix = redis.call('HGET', kept_key(top_key), item)
  if not prefix then return nil end
  return redis.call(kept.ascending and 'ZRANK' or 'ZREVRANK', order_key(top_key), prefix .. item)
end

-- Competition rank on the pair (strict: the place in the pair order; 0: not held), or nil when off.
local function rank_hook(top_key, item)
  local kept = setting(top_key)
  if not kept then return nil end
  local prefix = redis.call('HGET', kept_key(top_key), item)
  if not prefix then return 0 end
  if kept.strict then return redis.call(kept.ascending and 'ZRANK' or 'ZREVRANK', order_key(top_key), prefix .. item) + 1 end
  if kept.ascending then return redis.call('ZLEXCOUNT', order_key(top_key), '-', '(' .. prefix) + 1 end
  return redis.call('ZLEXCOUNT', order_key(top_key), '(' .. prefix .. AFTER_ANY_ITEM, '+') + 1
end

-- A write's mark of the item in each window (results keys keys[first_top + 2w]): its answer's tiebreak,
-- and what the other shards count ahead of it.
local function append_marks(reply, keys, first_top, window_count, item)
  if not tiebreak_order(keys[first_top]) then return end
  for w = 0, window_count - 1 do reply[#reply + 1] = mark_hook(keys[first_top + 2 * w], item) end
end

local function drop_order(base)
  redis.call('UNLINK', base .. 'tbkept', base .. 'tborder')
end

-- The board order (score_order_lib's field) a PUT asks (absent: the stored one), and the stored one.
local function score_orders(cfg_key, settings)
  local stored = redis.call('HGET', cfg_key, 'order') == 'asc' and 'asc' or 'desc'
  return settings.order or stored, stored
end

-- A board PUT: the order asked (absent: the stored one, none for a new board). Turning it on,
-- changing it, or changing the board's order while it is on drops every window's data (what windows
-- hold has no pairs, or pairs kept in another order), refused without reset.
local function tiebreak_planned(cfg_key, settings, reset, plan)
  local stored = plan and redis.call('HGET', cfg_key, 'tiebreak') or false
  local asked = type(settings.tiebreak) == 'table' and settings.tiebreak.order or nil
  if asked == nil then
    settings.tiebreak = stored and { order = stored } or nil
    asked = stored
  end
  if not plan or not asked then return end
  local problem
  if asked ~= stored then
    problem = 'tiebreak would change from ' .. (stored or 'none') .. ' to ' .. asked
  else
    local asked_order, stored_order = score_orders(cfg_key, settings)
    if asked_order == stored_order then return end
    problem = 'order would change from ' .. stored_order .. ' to ' .. asked_order .. ' on a board with a tiebreak'
  end
  plan.changed, plan.drop_all = true, true
  if not reset then plan.problems[#plan.problems + 1] = problem end
end

local function tiebreak_differs(cfg_key, settings)
  local asked = type(settings.tiebreak) == 'table' and settings.tiebreak.order or false
  if (redis.call('HGET', cfg_key, 'tiebreak') or false) ~= asked then return true end
  if not asked then return false end
  local asked_order, stored_order = score_orders(cfg_key, settings)
  return asked_order ~= stored_order
end

local function tiebreak_stored(cfg_key, settings)
  local asked = type(settings.tiebreak) == 'table' and settings.tiebreak.order or nil
  if asked then redis.call('HSET', cfg_key, 'tiebreak', asked) else redis.call('HDEL', cfg_key, 'tiebreak') end
  return asked ~= nil
end

-- Whether the board of the window of `top_key` keeps pairs (its calendar archives keep them: archive_lib).
local function keeps_pairs(top_key)
  return setting(top_key) ~= false
end

-- The member of the pair order the item held with the pair (score, tb) (numbers) in the window of
-- `top_key` (a calendar window's archive: archive_lib takes each row of a closed period this way as its
-- expiry drains it, before the window lets the item go). Strict: its tie mark when the window still
-- holds that pair, else (a later period's write changed it first) the latest one (all zeros turned by
-- kept_tie): it then comes after those who reached the pair in the period.
local function member_of(top_key, item, score, tb)
  local kept = setting(top_key)
  local pair = pair_prefix(score, mark_of_tiebreak(kept.marks, tb))
  if not kept.strict then return pair .. item end
  local held = redis.call('HGET', kept_key(top_key), item)
  if held and string.sub(held, 1, 2 * TB.WIDTH) == pair then return held .. item end
  return pair .. kept_tie(kept, string.rep('0', kept.tie_width)) .. item
end

-- Positions first..last of a zset `key` of such members (scored 0), best first: item, score (text)
-- and mark per row, as page_hook answers a row (the mark the shards' merge compares).
local function pair_rows(top_key, key, first, last)
  local kept = setting(top_key)
  local rows = {}
  for i, member in ipairs(redis.call(kept.ascending and 'ZRANGE' or 'ZREVRANGE', key, first, last)) do
    rows[i] = { item = string.sub(member, kept.width + 1), score = score_text(string.sub(member, 1, TB.WIDTH)),
      mark = string.sub(member, TB.WIDTH + 1, kept.strict and -1 or kept.width) }
  end
  return rows
end

-- Positions first..last of the pair order of the window of `top_key` (`key`: another zset of such
-- members, an archive's rows), best first, as a listing's text holds them (snapshot_lib's format, `row`
-- and `field` its separators): "<row><item><field><score><field><mark><field><position>", positions
-- from first + 1; and the previous listing's ZADD arguments: each row's competition rank on the pair
-- (strict: its position, its mark being unique), negated on a board whose higher scores come first.
-- `rank_before(item)`: the rank of the row before `first` (its item's), asked when the first row shares
-- its pair. One numeric loop (no ipairs call a row), string.sub and the widths held in locals, each
-- score's text written once (page_hook): 1 000 rows cost 16 M instructions as a page and then rows (issue #45).
local function listing_rows(top_key, key, first, last, row, field, rank_before)
  local kept = setting(top_key)
  local from = math.max(first - 1, 0)
  local members = redis.call(kept.ascending and 'ZRANGE' or 'ZREVRANGE', key or order_key(top_key), from, last)
  local sub, score_width, width = string.sub, TB.WIDTH, kept.width
  local mark_end, ranks, sign = kept.strict and -1 or width, kept.ascending and TEXTS or NEGATED, kept.ascending and '' or '-'
  local rows, ranked, held_key, held_mark, score_key, score, rank, start = {}, {}, nil, nil, nil, nil, 0, 1
  if first > 0 and members[1] then
    held_key, held_mark, start = sub(members[1], 1, score_width), sub(members[1], score_width + 1, mark_end), 2
  end
  for i = start, #members do
    local member, n, at = members[i], from + i, i - start + 1
    local pair_key, mark = sub(member, 1, score_width), sub(member, score_width + 1, mark_end)
    if pair_key ~= held_key or mark ~= held_mark then
      held_key, held_mark, rank = pair_key, mark, n
    elseif rank == 0 then
      rank = rank_before(sub(members[1], width + 1))
    end
    if pair_key ~= score_key then score_key, score = pair_key, score_text(pair_key) end
    local item = sub(member, width + 1)
    rows[at] = row .. item .. field .. score .. field .. mark .. field .. (TEXTS[n] or n)
    ranked[2 * at - 1], ranked[2 * at] = ranks[rank] or sign .. rank, item
  end
  return rows, ranked
end

hooks.export_all(tiebreak, { 'keeps_pairs', keeps_pairs, 'member_of', member_of, 'pair_rows', pair_rows,
  'listing_rows', listing_rows })

hooks.register_all('tiebreak', { 'tiebreak', tiebreak_hook, 'results_changed', tiebreak_changed, 'rank', rank_hook,
  'watches', function(top_key) return tiebreak_order(top_key) ~= false end, 'window_dropped', drop_order,
  'config_planned', tiebreak_planned, 'config_differs', tiebreak_differs, 'config_stored', tiebreak_stored,
  'page', page_hook, 'position', position_hook, 'mark_of', mark_hook, 'ahead', ahead_hook,
  'append_marks', append_marks })
