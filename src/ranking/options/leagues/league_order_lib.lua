-- module: league_order
-- requires: call_state, ties
-- league_order: the order inside a cohort of a `leagues` board (leagues_lib), by the board's `ties`
-- rule. Shared ties: a cohort zset's members are item ids, equal scores share one competition rank.
-- `ties: first`: equal scores rank in the order the members reached them, as the board's own reads do.
-- The window's strict order (ties_lib) cannot serve: once the period ends its marks move on (the
-- expired slot's drain, the next period's events), and the rollover ranks the closed period. So each
-- mirrored change that moves a member's league score draws a tie mark (ties.drawn_mark, in the same
-- call as the window's own, so members compare as the window's marks did), and the cohort zset's
-- member is <mark><item>: ZRANGE REV lists equal scores earliest first, ZREVRANK is the strict place.
-- The item's mark rides in its placement (`at`: "<period>:<tier>:<cohort>:<mark>"), cleared with it.
-- KEYS: 0

-- Whether the board of config hash `cfg_key` ranks strictly, and the width of its marks (0: shared).
function league_order.width_of(cfg_key, top_key)
  if call_state.config_field(cfg_key, 'ties') ~= 'first' then return 0 end
  return ties.mark_width(top_key)
end

-- "<period>:<tier>:<cohort>[:<mark>]" -> period, tier, cohort (numbers), mark ('' on shared ties); nil
-- for nil or false.
function league_order.parse_at(at)
  if not at then return nil end
  local p, t, c, mark = string.match(at, '^(%d+):(%d+):(%d+):?(%d*)$')
  return tonumber(p), tonumber(t), tonumber(c), mark
end

-- The placement of `at` without its mark ("<period>:<tier>:<cohort>"), or nil.
function league_order.placement(at)
  return at and string.match(at, '^%d+:%d+:%d+') or nil
end

-- A placement's value, its mark after it on a strict board.
function league_order.at_of(period, tier, cohort, mark)
  local at = period .. ':' .. tier .. ':' .. cohort
  if mark and mark ~= '' then at = at .. ':' .. mark end
  return at
end

-- A new mark for a member reaching a new league score (s.width > 0), else ''.
function league_order.new_mark(s)
  if s.width == 0 then return '' end
  return ties.drawn_mark(s.top_key, nil)
end

-- The item of a cohort member.
function league_order.item_of(s, member)
  if s.width == 0 then return member end
  return string.sub(member, s.width + 1)
end

-- The members at places offset.. of the cohort `key` (at most `count`, best first) as ZRANGE REV
-- WITHSCORES answers them with each member's item in its place, and the rank of each: strict, its
-- place; shared, its competition rank (equal scores share one). O(log n + count): one count, for the
-- first row of a shared page.
function league_order.page(s, key, offset, count)
  local rows = redis.call('ZRANGE', key, offset, offset + count - 1, 'REV', 'WITHSCORES')
  local ranks = {}
  for i = 1, #rows, 2 do
    local n = (i + 1) / 2
    rows[i] = league_order.item_of(s, rows[i])
    -- Past the first row a new score's rank is its place: every member before it scores more.
    if s.width > 0 or (i > 1 and rows[i + 1] ~= rows[i - 1]) then
      ranks[n] = offset + n
    elseif i == 1 then
      ranks[n] = 1 + redis.call('ZCOUNT', key, '(' .. rows[2], '+inf')
    else
      ranks[n] = ranks[n - 1]
    end
  end
  return rows, ranks
end

-- An item's score and rank in the cohort `key` (its `mark` from its placement), or nil when not in it.
function league_order.standing(s, key, item, mark)
  local member = (s.width > 0 and mark or '') .. item
  local score = redis.call('ZSCORE', key, member)
  if not score then return nil end
  if s.width > 0 then return score, 1 + redis.call('ZREVRANK', key, member) end
  return score, 1 + redis.call('ZCOUNT', key, '(' .. score, '+inf')
end

-- A cohort's bounds for the rollover. Shared: its lowest score still promoted (its `promote`th
-- highest) and highest still relegated (its `relegate`th lowest): a member is promoted when it scores
-- at least the first (its rank is within `promote`), else relegated when it scores at most the second
-- (1 + the members below it is within `relegate`); fewer members than `promote`: all of them are.
-- Strict: its size, the members' places decide. O(log n), so a cohort rolled in parts moves each
-- member as the whole cohort's ranks say.
function league_order.bounds(s, key)
  if s.width > 0 then return { size = redis.call('ZCARD', key) } end
  local bounds = { promote = math.huge, relegate = -math.huge }
  if s.promote > 0 then
    bounds.promote = tonumber(redis.call('ZRANGE', key, s.promote - 1, s.promote - 1, 'REV', 'WITHSCORES')[2]) or -math.huge
  end
  if s.relegate > 0 then
    bounds.relegate = tonumber(redis.call('ZRANGE', key, s.relegate - 1, s.relegate - 1, 'WITHSCORES')[2]) or math.huge
  end
  return bounds
end

-- A member's tier after the rollover ({ score, rank }; see bounds): up, else down, else kept.
function league_order.moved_tier(s, tier, member, bounds)
  local up, down
  if bounds.size then
    up, down = member.rank <= s.promote, member.rank > bounds.size - s.relegate
  else
    local score = tonumber(member.score)
    up, down = score >= bounds.promote, score <= bounds.relegate
  end
  if up and tier < s.tier_count then return tier + 1 end
  if down and tier > 1 then return tier - 1 end
  return tier
end
