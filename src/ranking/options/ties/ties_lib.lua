-- module: ties
-- requires: call_state, hooks, keyspace
-- ties_lib: the strict order of a `ties: first` board, a board option (src/ranking/options/ties/). It
-- registers its hooks (hooks_lib): results changes call tie_order_changed, ranks ask tie_rank first,
-- a dropped window drops its order; the reads that list, place or count in the strict order call it.
-- KEYS: 0
-- Keys, siblings of a window's results zset "<base>top" (same hash tag):
--   <base>order      zset  score = the item's score, member = <mark><item> for every item listed (scoring
--                          > 0; on a max / min / last board, every item the window holds: any sign)
--   <base>marks      hash  item -> its <mark>
--   <base>drain      string "<slot start> <mark>": the mark of the expired slot draining (tie_drain_mark)
-- Config hash fields: ties ("first"; absent: shared), tieSeq (the shard's last sequence number), tieMs
-- (sharded boards: the latest time a mark was drawn at).
-- A mark is drawn each time an item's score in a window changes, fixed-width decimal, inverted so that
-- ZREVRANGE (score descending, then member descending) lists equal scores earliest mark first:
-- * a board of 1 shard: TIE.MAX - seq in 15 digits, seq from tieSeq (the first format, kept).
-- * a sharded board: the write's time (unix ms, the header's `now` every changing call passes, never
--   below the shard's tieMs so a shard's marks follow its own order), then seq, then the shard index:
--   TIE.MS_MAX - ms (13 digits) .. TIE.MAX - seq (15) .. 99 - shard (2). Marks of different shards
--   then compare as strings without a shared counter: the earlier time first, within one millisecond
--   an order fixed once drawn (seq, then shard). Counting the items of a shard ahead of another
--   shard's (score, mark) is a binary search over the run of that score in the order zset (tie_ahead).
-- The items an expiry moves all reach their new scores at once (when their slot left the window): the
-- drain of one expired slot gives them one mark, so equal scores it makes list in the members' order
-- (descending byte order of id, as shared ties list them), however many calls the slot drains in.
-- Marks are therefore not unique on a shard: what leaves ties_lib as an item's mark (mark_of, page,
-- append_marks, and back into tie_ahead) is its whole member, <mark><item>, unique and in the order.
-- On a board with a tiebreak (tiebreak_lib) the strict order is the pair order's, tie marks drawn here
-- (ties.drawn_mark) kept after each pair: these hooks then answer only `strict` (own_order).
-- Another option keeping a zset in the board's order (a leagues cohort) marks its members with
-- ties.drawn_mark too, and pages and ranks them with ties.marked_page and ties.marked_standing.
-- Exact: scores are the results' own (integers, %.17g), seqs integers below 10^15 (a billion writes a
-- day for 340 years on a board of 8 windows, a write drawing a seq for each window ahead), times below
-- 10^13 ms (year 2286).

local CALL = call_state.CALL

-- The running call's state (call_lib): the same tables for every call.
local CONFIG = call_state.CONFIG

-- RUN_READ: members of a score's run tie_ahead reads in one call (a longer run: a binary search beyond).
local TIE = { DIGITS = 15, MAX = 999999999999999, SHARDED_DIGITS = 30, MS_MAX = 9999999999999, RUN_READ = 32 }
TIE.FORMAT = '%0' .. TIE.DIGITS .. 'd'

-- A score as a command's argument, exactly: a whole one below 2^53 as "%d" (what "%.17g" writes for it, without a
-- float's formatting), any other (0 too: its sign) "%.17g". The last whole score written keeps its text: a
-- write's windows mostly reach the same score.
local last_score = { score = nil, text = nil }
local function score_arg(score)
  if score ~= 0 and score == last_score.score then return last_score.text end
  if score == 0 or score % 1 ~= 0 or math.abs(score) >= 2 ^ 53 then return string.format('%.17g', score) end
  last_score.score, last_score.text = score, string.format('%d', score)
  return last_score.text
end

local cfg_key_of_top = call_state.cfg_key_of_top
call_state.config_field_add('ties', 'ties')

-- ties_first's answers for the call's board's results keys in this call (call_state.call_cache): a write asks
-- it again for each window it changes (its segments' too) and each rank.
local memo = { seq = 0, by = {} }

-- Asked for every results change and rank: answered from the call's config (call_lib) when it is this
-- board's, and kept for the call's board's results keys.
local function ties_first(top_key)
  local by = call_state.call_cache(memo)
  local known = by[top_key]
  if known ~= nil then return known end
  local cfg_key = cfg_key_of_top(top_key)
  -- A group board's results (under its member board's tag) rank groups by shared ties.
  local first = call_state.config_field(cfg_key, 'ties') == 'first' and not call_state.of_group_board(top_key)
  if cfg_key == CONFIG.cfg_key then by[top_key] = first end
  return first
end

-- The last shard count text read and whether it is more than 1 (asked for every mark drawn).
local shards_text = { text = '1', sharded = false }

-- Whether the board of `top_key` has several shards (its marks then hold a time and the shard index).
local function tie_sharded(top_key)
  local text = call_state.config_field(cfg_key_of_top(top_key), 'shards') or '1'
  if text ~= shards_text.text then shards_text.text, shards_text.sharded = text, tonumber(text) > 1 end
  return shards_text.sharded
end

-- The sequence numbers the call `seq` took for the board of `cfg_key` and has not drawn yet: next..last.
local block = { seq = 0, cfg_key = nil, next = 1, last = 0 }

-- The shard's next sequence number. Where the call was told how many marks it is about to draw
-- (CALL.marks_ahead) it takes that many in one HINCRBY and draws them in order (a pass over 8 segments
-- took one for each of its 32 windows); any it leaves undrawn are never drawn, and every later call's are
-- greater, so the marks keep the order they are drawn in.
local function next_seq(cfg_key)
  if block.seq == CALL.seq and block.cfg_key == cfg_key and block.next <= block.last then
    block.next = block.next + 1
    return block.next - 1
  end
  local count = cfg_key == CALL.cfg_key and CALL.marks_ahead or 1
  CALL.marks_ahead = nil
  local last = redis.call('HINCRBY', cfg_key, 'tieSeq', string.format('%d', count))
  block.seq, block.cfg_key, block.next, block.last = CALL.seq, cfg_key, last - count + 2, last
  return last - count + 1
end

-- A new mark on the shard of config hash `cfg_key` (TIE: its format by the board's shard count).
local function tie_new_mark(top_key, cfg_key)
  local seq = next_seq(cfg_key)
  -- Integers below 2^53 written as integers ("%d"): the same digits as "%.0f", without its float formatting.
  if not tie_sharded(top_key) then return string.format(TIE.FORMAT, TIE.MAX - seq) end
  local last_ms = tonumber(redis.call('HGET', cfg_key, 'tieMs') or '0')
  local now_ms = math.floor(call_state.now_ms() or 0)
  if now_ms > last_ms then redis.call('HSET', cfg_key, 'tieMs', now_ms) else now_ms = last_ms end
  local shard = tonumber(string.match(cfg_key, '/(%d+)}:cfg$') or '0')
  return string.format('%013d%015d%02d', TIE.MS_MAX - now_ms, TIE.MAX - seq, 99 - shard)
end

-- The mark of the drain of the expired slot CALL.draining (its start) in the window of `top_key`: drawn
-- by the call that drains the slot's first chunk, kept in <base>drain for the calls draining the rest
-- (and in `drain` for this call). Every item that drain moves takes it, except one whose mark is later
-- (written while the slot drains: it reached its score then, so it keeps that place).
local drain = { seq = 0, top = nil, start = nil, mark = nil }

local function tie_drain_mark(top_key, old)
  local start = CALL.draining
  if drain.seq ~= CALL.seq or drain.top ~= top_key or drain.start ~= start then
    local drain_key = keyspace.sibling_key(top_key, 'top', 'drain')
    local held_start, held_mark = string.match(redis.call('GET', drain_key) or '', '^(%S+) (%d+)$')
    if held_start ~= start then
      held_mark = tie_new_mark(top_key, cfg_key_of_top(top_key))
      redis.call('SET', drain_key, start .. ' ' .. held_mark)
    end
    drain.seq, drain.top, drain.start, drain.mark = CALL.seq, top_key, start, held_mark
  end
  -- Inverted marks: a later one sorts lower.
  if old and old < drain.mark then return old end
  return drain.mark
end

-- Whether an item now scoring `score` in the window of `top_key` is listed (order_lib's listed): above
-- 0, or on a max / min / last board any score the window holds (0 there is a score or a leave: the
-- results, already changed, tell).
local function tie_listed(top_key, item, score)
  if score > 0 then return true end
  local aggregate = call_state.config_field(cfg_key_of_top(top_key), 'aggregate')
  if not aggregate or aggregate == 'sum' then return false end
  return score ~= 0 or redis.call('ZSCORE', top_key, item) ~= false
end

-- Whether the board of `top_key` also keeps (score, tiebreak) pairs: tiebreak_lib then keeps the strict
-- order in its pair order (a tie mark after each pair's), and these hooks leave it every answer but
-- `strict`; it draws its tie marks with ties.drawn_mark.
local function paired(top_key)
  return call_state.config_field(cfg_key_of_top(top_key), 'tiebreak') and true or false
end

-- ties_first on a board whose strict order this module keeps itself (no tiebreak).
local function own_order(top_key)
  return ties_first(top_key) and not paired(top_key)
end

-- The order and marks keys of the window results `top_key`, kept from call to call (a pure function of it).
local TIE_KEYS = call_state.memo(1024)
local function tie_keys(top_key)
  local keys = TIE_KEYS.by[top_key]
  if keys then return keys[1], keys[2] end
  keys = { keyspace.sibling_key(top_key, 'top', 'order'), keyspace.sibling_key(top_key, 'top', 'marks') }
  call_state.memo_put(TIE_KEYS, top_key, keys)
  return keys[1], keys[2]
end

-- A tie mark for an item of the window `top_key` reaching a new record now (`old`: its mark before,
-- nil when none): a drain's shared one while an expired slot drains, else a new one.
function ties.drawn_mark(top_key, old)
  if CALL.draining then return tie_drain_mark(top_key, old) end
  return tie_new_mark(top_key, cfg_key_of_top(top_key))
end

-- The width of the tie marks of the board of `top_key` (by its shard count).
function ties.mark_width(top_key)
  return tie_sharded(top_key) and TIE.SHARDED_DIGITS or TIE.DIGITS
end

-- The mark tie_order_changed last left to an item in this call (false: none), for the rank a write asks of the
-- same item in the same window right after (tie_mark): its marks hash is written nowhere else.
local written = { seq = 0, marks_key = nil, item = nil, mark = false }

-- The item's mark in the marks hash `marks_key` (nil: none).
local function tie_mark(marks_key, item)
  if written.marks_key == marks_key and written.item == item and written.seq == CALL.seq then
    return written.mark or nil
  end
  return redis.call('HGET', marks_key, item)
end

-- Hook: the item's score in the window of `top_key` is now `score`: it takes a new place among the
-- items of its score, after those that reached it before (nothing on a board of shared ties).
local function tie_order_changed(top_key, item, score)
  if not own_order(top_key) then return end
  local order_key, marks_key = tie_keys(top_key)
  local old = tie_mark(marks_key, item)
  if old then redis.call('ZREM', order_key, old .. item) end
  local mark = false
  if tie_listed(top_key, item, score) then
    mark = CALL.draining and tie_drain_mark(top_key, old) or tie_new_mark(top_key, cfg_key_of_top(top_key))
    redis.call('ZADD', order_key, score_arg(score), mark .. item)
    redis.call('HSET', marks_key, item, mark)
  elseif old then
    redis.call('HDEL', marks_key, item)
  end
  written.seq, written.marks_key, written.item, written.mark = CALL.seq, marks_key, item, mark
end

-- The item's member <mark><item> in the window of `top_key` on a sharded `ties: first` board, else ''
-- (not listed, shared ties, or one shard: marks are compared across shards only).
local function tie_mark_of(top_key, item)
  if not own_order(top_key) or not tie_sharded(top_key) then return '' end
  local mark = tie_mark(keyspace.sibling_key(top_key, 'top', 'marks'), item)
  return mark and mark .. item or ''
end

-- Appends the item's mark in each window (results keys keys[first_top + 2w]) to a write's reply on a
-- sharded `ties: first` board, for the other shards to count the items ahead of it; else nothing.
local function append_tie_marks(reply, keys, first_top, window_count, item)
  if window_count == 0 or not own_order(keys[first_top]) or not tie_sharded(keys[first_top]) then return end
  for w = 0, window_count - 1 do reply[#reply + 1] = tie_mark_of(keys[first_top + 2 * w], item) end
end

-- Items of this shard ahead of an item of `score` (a listed one) and member `mark` (<mark><item>: another
-- shard's, or this one's): those scoring higher, and those of equal score whose member sorts above (an
-- earlier mark, or the same one and a greater id). The equal scores are one run of the order zset, its
-- members descending: a binary search finds how many of them sort above, over the run's first
-- TIE.RUN_READ members read in one call (the whole run, mostly), then one member read per step
-- (O(log^2 n), read-only). `mark` '': items scoring higher only.
local function tie_ahead(top_key, score, mark)
  local exact = string.format('%.17g', score)
  if mark == '' then return redis.call('ZCOUNT', top_key, '(' .. exact, '+inf') end
  local order_key = keyspace.sibling_key(top_key, 'top', 'order')
  local higher = redis.call('ZCOUNT', order_key, '(' .. exact, '+inf')
  local run = redis.call('ZRANGE', order_key, exact, exact, 'BYSCORE', 'REV', 'LIMIT', 0, TIE.RUN_READ)
  local low, high = 0, #run
  if high == TIE.RUN_READ then high = redis.call('ZCOUNT', order_key, exact, exact) end
  while low < high do
    local middle = math.floor((low + high) / 2)
    local member = run[middle + 1] or redis.call('ZREVRANGE', order_key, higher + middle, higher + middle)[1]
    if member and member > mark then low = middle + 1 else high = middle end
  end
  return higher + low
end

-- The item's 0-based place in the strict order (nil: not listed), or false on a board of shared ties.
local function tie_position(top_key, item)
  if not own_order(top_key) then return false end
  local mark = tie_mark(keyspace.sibling_key(top_key, 'top', 'marks'), item)
  if not mark then return nil end
  return redis.call('ZREVRANK', keyspace.sibling_key(top_key, 'top', 'order'), mark .. item)
end

-- The 0-based places in the strict order of `items` (item -> place; absent: not listed), from one
-- HMGET of their marks and a ZREVRANK each, or nil on a board of shared ties.
local function tie_positions(top_key, items)
  if #items == 0 or not own_order(top_key) then return nil end
  local marks = redis.call('HMGET', keyspace.sibling_key(top_key, 'top', 'marks'), unpack(items))
  local order_key, places = keyspace.sibling_key(top_key, 'top', 'order'), {}
  for i, item in ipairs(items) do
    if marks[i] then places[item] = redis.call('ZREVRANK', order_key, marks[i] .. item) end
  end
  return places
end

-- Strict rank of an item (0: not ranked), or nil on a board of shared ties.
local function tie_rank(top_key, item)
  local position = tie_position(top_key, item)
  if position == false then return nil end
  return position and position + 1 or 0
end

-- Positions first..last (0-based) of the strict order as ZREVRANGE WITHSCORES answers them (item,
-- score, ...), or nil on a board of shared ties. On a sharded board each row's member goes to `marks`.
local function tie_page(top_key, first, last, marks)
  if not own_order(top_key) then return nil end
  local page = redis.call('ZREVRANGE', keyspace.sibling_key(top_key, 'top', 'order'), first, last, 'WITHSCORES')
  local width = tie_sharded(top_key) and TIE.SHARDED_DIGITS or TIE.DIGITS
  for i = 1, #page, 2 do
    if width == TIE.SHARDED_DIGITS and marks then marks[#marks + 1] = page[i] end
    page[i] = string.sub(page[i], width + 1)
  end
  return page
end

-- A zset another option keeps in a board's order (a leagues cohort): members <mark><item> on a
-- `ties: first` board (`width`: the marks' digits, drawn by ties.drawn_mark), so ZRANGE REV lists equal
-- scores earliest first; plain items (`width` 0) on a board of shared ties.
function ties.item_of(member, width)
  if width == 0 then return member end
  return string.sub(member, width + 1)
end

-- Places offset.. (at most `count`, best first) of such a zset as ZRANGE REV WITHSCORES answers them,
-- each member replaced by its item, and each row's rank: strict, its place; shared, its competition
-- rank (equal scores share one). O(log n + count): one count, for the first row of a shared page.
function ties.marked_page(key, offset, count, width)
  local rows = redis.call('ZRANGE', key, offset, offset + count - 1, 'REV', 'WITHSCORES')
  local ranks = {}
  for i = 1, #rows, 2 do
    local n = (i + 1) / 2
    rows[i] = ties.item_of(rows[i], width)
    -- Past the first row a new score's rank is its place: every member before it scores more.
    if width > 0 or (i > 1 and rows[i + 1] ~= rows[i - 1]) then
      ranks[n] = offset + n
    elseif i == 1 then
      ranks[n] = 1 + redis.call('ZCOUNT', key, '(' .. rows[2], '+inf')
    else
      ranks[n] = ranks[n - 1]
    end
  end
  return rows, ranks
end

-- The score and rank (strict or competition, as marked_page) of `member` in such a zset, or nil.
function ties.marked_standing(key, member, width)
  local score = redis.call('ZSCORE', key, member)
  if not score then return nil end
  if width > 0 then return score, 1 + redis.call('ZREVRANK', key, member) end
  return score, 1 + redis.call('ZCOUNT', key, '(' .. score, '+inf')
end

-- Unlinks the strict order of the window `base` ("<tag>:<window>:"), when it goes (drop_window).
local function drop_tie_order(base)
  redis.call('UNLINK', base .. 'order', base .. 'marks', base .. 'drain')
end

-- A board PUT: the mode asked (absent: the stored one, shared for a new board); a change drops every
-- window's data like a change of shards (which drops it too, so a board's marks always have the
-- format of its shard count), refused without reset.
local function ties_planned(cfg_key, settings, reset, plan)
  local stored = plan and (redis.call('HGET', cfg_key, 'ties') or 'shared') or 'shared'
  if settings.ties == nil then settings.ties = stored end
  if not plan or settings.ties == stored then return end
  plan.changed, plan.drop_all = true, true
  if not reset then plan.problems[#plan.problems + 1] = 'ties would change from ' .. stored .. ' to ' .. settings.ties end
end

-- shard_sync: a change of the mode drops the shard's data (the order of what it holds is not known).
local function ties_differ(cfg_key, settings)
  return (redis.call('HGET', cfg_key, 'ties') or 'shared') ~= (settings.ties or 'shared')
end

-- Stores the mode (config field `ties`, absent for shared); `ties: first` enables the option's hooks.
local function ties_stored(cfg_key, settings)
  if settings.ties == 'first' then redis.call('HSET', cfg_key, 'ties', 'first') else redis.call('HDEL', cfg_key, 'ties') end
  return settings.ties == 'first'
end

-- The hooks answer nil on a board of shared ties: the core's order (order_lib) then decides.
local function strict_hook(top_key)
  return ties_first(top_key) or nil
end

local function mark_hook(top_key, item)
  if own_order(top_key) then return tie_mark_of(top_key, item) end
  return nil
end

local function ahead_hook(top_key, score, mark)
  if mark ~= '' and own_order(top_key) then return tie_ahead(top_key, score, mark) end
  return nil
end

hooks.register_all('ties', { 'results_changed', tie_order_changed, 'window_dropped', drop_tie_order, 'rank', tie_rank,
  'watches', ties_first, 'config_planned', ties_planned, 'config_differs', ties_differ, 'config_stored', ties_stored,
  'strict', strict_hook, 'page', tie_page, 'position', tie_position, 'positions', tie_positions, 'mark_of', mark_hook,
  'ahead', ahead_hook, 'append_marks', append_tie_marks })
