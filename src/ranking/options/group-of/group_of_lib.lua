-- module: group_of
-- requires: call_state, group_members, hooks, keyspace, order
-- group_of_lib: group boards, a board option (src/ranking/options/group-of/). A board declaring
-- `groupOf: { board: M, window: W, top, decay }` ranks groups of M's items by Σ decay^i · s_i over a
-- group's `top` best members' scores s_i in W, best in M's order (asc: the lowest), the members M's
-- listing leaves out (moderation) counting for no group. Everything lives under M's hash tag, beside W, so the
-- member board's own calls keep it exact in the same atomic step: every change of W's results
-- (writes, expiry drains, resets) moves the member's score in its group's zset and marks the group
-- dirty (O(log n), hook results_changed); a dirty group's score is recomputed from its best `top`
-- members by group_settle (at most GROUP_SETTLE_ROWS member rows a call), which every read of the
-- group board runs first, again while some group is still dirty, so a read answers only settled
-- scores. Over a sharded M, each shard keeps the memberships, zsets and marks of its own items, and
-- shard 0 the scores: a read settles in rounds across the shards (shard_step, claim, store; their
-- callers group_shard_step and group_scores_store, src/ranking/group-boards/sharded-settle.ts).
-- KEYS: 0
-- Keys, under the tag of M's shard, base "<tag>:<W>%<G>:" (`%` is in no name: never a window's keys):
--   <base>mem     hash  item -> its group (an item is in at most one group of G)
--   <base>groups  hash  group -> its members
--   <base>g:<h>   zset  item -> score in W, the group's members listed in W before moderation (h:
--                       SHA-1 of the group id: ids are never key names)
--   <base>dirty   set   groups whose score may differ from their members'
--   <base>rule    string "<top> <decay>" the scores in <base>top were computed with
--   <base>top     zset  group -> score: the group board's results (read like a window's)
--   <base>slots   zset  never written: the read's slots index (nothing to expire)
--   <base>gen     hash  group -> the shard's change counter at its last change here (kept until a
--                       settle stored a score counting it and the shard holds none of its members)
--   <base>seq     string the shard's change counter (shard 0: also the settle rounds' claim tokens)
--   <base>claims  hash  group -> the token of the last round that claimed it (shard 0 of a sharded M)
--   <base>snaps, <base>snap:<at>, <base>prev   the group board's history, in snapshot_lib's format
--                       (group_history_lib: kept at W's boundaries; over a sharded M, shard 0 keeps
--                       them merged from the shards' parts: group_parts_lib, <base>parts, part:<at>, since)
--   <base>cnt:<at>      hash  the counted members of a kept listing (group_history_out_lib)
--   <base>rcap    string the counted members those records may hold together (set by a membership change)
-- Config hash field of G: groupOf (its setting, JSON). Of M: groupedBy ("<W> <G>;..."): the group boards over its windows.
-- A deleted G's keys go by group_board_drop (GROUP_OF.detach, drop_keys); a deleted M's with its own
-- keys (hook board_dropped, by its renamed config's groupedBy).

call_state.config_field_add('groupedBy', 'group_of')

local GROUP_OF = {}

-- The group's members on this shard changed: it is dirty, and its generation (the shard's change
-- counter) is new, so a sharded settle clears the mark only if nothing changed since it read the rows.
function GROUP_OF.changed(base, group)
  redis.call('HSET', base .. 'gen', group, redis.call('INCR', base .. 'seq'))
  redis.call('SADD', base .. 'dirty', group)
end

-- One entry "<W> <G>" of groupedBy (call_state.store_list_field's list), as string.gmatch's pattern.
local GROUPED_BY_ENTRY = '([^; ]+) ([^;]+)'

-- "<tag>:cfg", window, group board -> "<tag>:<window>%<board>:"
local function base_of(cfg_key, window, board)
  return keyspace.sibling_key(cfg_key, 'cfg', window .. '%' .. board .. ':')
end

local function group_key(base, group)
  return base .. 'g:' .. redis.sha1hex(group)
end

-- The bases of the group boards over the window of `top_key` ("<tag>:<W>:top"), by groupedBy's value.
local parsed = call_state.memo(256)

local function bases_of(top_key)
  local cfg_key = call_state.cfg_key_of_top(top_key)
  local stored = call_state.config_field(cfg_key, 'groupedBy')
  if not stored then return nil end
  -- Keyed by the config too: the shards of a sharded member board hold the same groupedBy, each its own bases.
  local known = cfg_key .. '\n' .. stored
  local by_window = parsed.by[known]
  if not by_window then
    by_window = {}
    for window, board in string.gmatch(stored, GROUPED_BY_ENTRY) do
      by_window[window] = by_window[window] or {}
      table.insert(by_window[window], base_of(cfg_key, window, board))
    end
    call_state.memo_put(parsed, known, by_window)
  end
  return by_window[string.sub(top_key, #cfg_key - 2, -5)]
end

-- The member's place in its group's zset: its score in W when listed there, else none.
local function place(base, top_key, group, item)
  local score = redis.call('ZSCORE', top_key, item)
  if score and order.listed(top_key, tonumber(score)) then
    redis.call('ZADD', group_key(base, group), score, item)
  else
    redis.call('ZREM', group_key(base, group), item)
  end
  GROUP_OF.changed(base, group)
end

-- Hook results_changed: a member's score in W moved (written, drained, reset).
local function member_changed(top_key, item)
  local bases = bases_of(top_key)
  if not bases then return end
  for i = 1, #bases do
    local group = redis.call('HGET', bases[i] .. 'mem', item)
    if group then place(bases[i], top_key, group, item) end
  end
end

-- Hook window_dropped: W's data went, so did every member's score; memberships stay.
local function window_dropped(window_base)
  local top_key = window_base .. 'top'
  local bases = bases_of(top_key)
  if not bases then return end
  for i = 1, #bases do
    local base = bases[i]
    for _, group in ipairs(redis.call('HKEYS', base .. 'groups')) do
      redis.call('UNLINK', group_key(base, group))
      GROUP_OF.changed(base, group)
    end
  end
end

-- Names the group board `board` over `window` in M's groupedBy (at most `most` group boards) and
-- enables the option's hooks on M. Answers an error line, or nil.
local function attach(cfg_key, window, board, most)
  local stored = redis.call('HGET', cfg_key, 'groupedBy') or ''
  local entry = window .. ' ' .. board
  local count = 0
  for w, b in string.gmatch(stored, GROUPED_BY_ENTRY) do
    if w == window and b == board then return nil end
    count = count + 1
  end
  if count >= most then return 'TB_QUOTA groupBoards ' .. count end
  redis.call('HSET', cfg_key, 'groupedBy', stored == '' and entry or stored .. ';' .. entry)
  call_state.enable_option(cfg_key, 'group_of')
  return nil
end

-- The member `item` leaves `group`.
local function leave(base, group, item)
  redis.call('ZREM', group_key(base, group), item)
  if redis.call('HINCRBY', base .. 'groups', group, -1) <= 0 then
    redis.call('HDEL', base .. 'groups', group)
    redis.call('UNLINK', group_key(base, group))
  end
  GROUP_OF.changed(base, group)
end

-- Why `item` may not join `group` (an error line), or nil: the group board's limits.
local function refusal(base, previous, group, limits)
  local held = redis.call('HLEN', base .. 'mem')
  if previous == '' and held >= limits.members then return 'TB_QUOTA groupMembers ' .. held end
  local size = redis.call('HGET', base .. 'groups', group)
  if not size and redis.call('HLEN', base .. 'groups') >= limits.groups then return 'TB_QUOTA groups ' .. limits.groups end
  if size and tonumber(size) >= limits.per_group then return 'TB_QUOTA groupSize ' .. size end
  return nil
end

-- Makes `item` a member of `group` ("": of none) in the group board `board` over M's `window`.
-- Answers the group it was in ("": none) and an error line (nothing changed) or nil.
function GROUP_OF.set_member(cfg_key, window, board, item, group, limits)
  local err = attach(cfg_key, window, board, limits.boards)
  if err then return nil, err end
  local base = base_of(cfg_key, window, board)
  -- Kept from the first member on: the scores a boundary settles (group_history_lib) follow it.
  GROUP_OF.rule_kept(base, limits.rule)
  redis.call('SET', base .. 'rcap', limits.recorded_members)
  local previous = redis.call('HGET', base .. 'mem', item) or ''
  if previous == group then return previous, nil end
  if group ~= '' then
    err = refusal(base, previous, group, limits)
    if err then return nil, err end
  end
  if previous ~= '' then leave(base, previous, item) end
  if group == '' then
    redis.call('HDEL', base .. 'mem', item)
  else
    redis.call('HSET', base .. 'mem', item, group)
    redis.call('HINCRBY', base .. 'groups', group, 1)
    place(base, keyspace.sibling_key(cfg_key, 'cfg', window .. ':top'), group, item)
  end
  -- The group board's streams poll M's version (its groups live under M).
  redis.call('HINCRBY', cfg_key, 'ver', 1)
  return previous, nil
end

-- Takes the group board `board` over `window` out of M's groupedBy (the field goes with its last
-- entry): M's writes and drains stop keeping its groups.
function GROUP_OF.detach(cfg_key, window, board)
  local stored = redis.call('HGET', cfg_key, 'groupedBy')
  if not stored then return end
  local kept = {}
  for w, b in string.gmatch(stored, GROUPED_BY_ENTRY) do
    if w ~= window or b ~= board then kept[#kept + 1] = w .. ' ' .. b end
  end
  call_state.store_list_field(cfg_key, 'groupedBy', kept)
end

-- Unlinks the keys of the group board `board` over `window`, at most about `budget` group zsets a
-- call: the groups hash loses each group whose zset went in the same call, so a repeat goes on where
-- one stopped (on two instances at once too). Answers the budget left and whether nothing is left.
function GROUP_OF.drop_keys(cfg_key, window, board, budget)
  local base = base_of(cfg_key, window, board)
  local groups = redis.call('HKEYS', base .. 'groups')
  local taken = math.min(#groups, math.max(1, budget))
  if taken > 0 then
    local names = {}
    for i = 1, taken do names[i] = group_key(base, groups[i]) end
    redis.call('UNLINK', unpack(names))
    redis.call('HDEL', base .. 'groups', unpack(groups, 1, taken))
  end
  if taken < #groups then return budget - taken, false end
  redis.call('UNLINK', base .. 'mem', base .. 'groups', base .. 'dirty', base .. 'rule', base .. 'top', base .. 'slots')
  -- Its history (group_history_lib): at most `keep` (1 000) listings.
  local kept = redis.call('ZRANGE', base .. 'snaps', 0, -1)
  for _, at in ipairs(kept) do redis.call('UNLINK', base .. 'snap:' .. at, base .. 'cnt:' .. at) end
  -- A sharded member board's parts of listings not merged yet (group_parts_lib): at most keep + 2.
  local parts = redis.call('ZRANGE', base .. 'parts', 0, -1)
  -- With what a group paged in one staged (group_part_pages_lib's staged_keys).
  for _, at in ipairs(parts) do redis.call('UNLINK', base .. 'part:' .. at, base .. 'part:' .. at .. ':hz', base .. 'part:' .. at .. ':ht') end
  redis.call('UNLINK', base .. 'gen', base .. 'seq', base .. 'claims', base .. 'prev', base .. 'snaps', base .. 'rcap')
  redis.call('UNLINK', base .. 'parts', base .. 'since', base .. 'rtr')
  return budget - taken - 13 - #kept - #parts, true
end

-- Hook board_dropped: the groups of the group boards over a deleted member board's windows (its
-- renamed config's groupedBy), one group board after another, within the step's budget.
local function member_board_dropped(cfg_key, drop_key, budget)
  local done = true
  for window, board in string.gmatch(redis.call('HGET', drop_key, 'groupedBy') or '', GROUPED_BY_ENTRY) do
    budget, done = GROUP_OF.drop_keys(cfg_key, window, board, budget)
    if not done then return budget, false end
  end
  return budget, done
end

-- The group's score from its best `top` members: Σ decay^i · s_i (the weights as repeated products);
-- absent when it has no listed member. Answers the member rows it read, plus one.
local function recompute(base, group, top, decay, ex)
  local rows, read = group_members.best_rows(group_key(base, group), top, ex)
  if #rows == 0 then
    redis.call('ZREM', base .. 'top', group)
    if redis.call('HEXISTS', base .. 'groups', group) == 0 then redis.call('HDEL', base .. 'gen', group) end
    return read + 1
  end
  local sum, weight = 0, 1
  for i = 2, #rows, 2 do
    sum = sum + weight * tonumber(rows[i])
    weight = weight * decay
  end
  redis.call('ZADD', base .. 'top', string.format('%.17g', sum), group)
  return read + 1
end

-- Recomputes dirty groups of the group board `board` over `window` within `budget` member rows (a
-- changed rule marks every group dirty first). Answers 1 when some group is still dirty, else 0.
function GROUP_OF.settle(cfg_key, window, board, top, decay, budget)
  local base = base_of(cfg_key, window, board)
  GROUP_OF.rule_kept(base, top .. ' ' .. decay)
  local ex = group_members.exceptions_of(keyspace.sibling_key(cfg_key, 'cfg', window .. ':top'))
  return (GROUP_OF.settle_base(base, top, tonumber(decay), budget, ex))
end

-- Recomputes dirty groups of the group board keyed at `base` within `budget` member rows, leaving out
-- the member board's exceptions `ex`. Answers 1 when some group is still dirty, else 0, and the rows it read.
function GROUP_OF.settle_base(base, top, decay, budget, ex)
  local dirty, left = base .. 'dirty', budget
  while left > 0 do
    local group = redis.call('SPOP', dirty)
    if not group then return 0, budget - left end
    left = left - recompute(base, group, top, decay, ex)
  end
  return redis.call('SCARD', dirty) > 0 and 1 or 0, budget - left
end

-- A changed rule ("<top> <decay>") marks every group of the shard dirty.
function GROUP_OF.rule_kept(base, rule)
  if redis.call('GET', base .. 'rule') == rule then return end
  for _, group in ipairs(redis.call('HKEYS', base .. 'groups')) do GROUP_OF.changed(base, group) end
  redis.call('SET', base .. 'rule', rule)
end

-- Hook exceptions_changed: the items the member board's listing leaves out on this shard changed
-- (moderation): the groups of `items` (nil: every group, by forgetting the rule, as a changed rule
-- does) count their members afresh at the next settle.
local function exceptions_changed(cfg_key, items)
  for window, board in string.gmatch(redis.call('HGET', cfg_key, 'groupedBy') or '', GROUPED_BY_ENTRY) do
    local base = base_of(cfg_key, window, board)
    if not items then GROUP_OF.rule_kept(base, '') end
    for _, item in ipairs(items or {}) do
      local group = redis.call('HGET', base .. 'mem', item)
      if group then GROUP_OF.changed(base, group) end
    end
  end
end

-- One shard of a sharded member board in a settle round (src/ranking/group-boards/sharded-settle.ts):
-- clears the dirty marks of `clears` (group, generation pairs: only where the generation is still the
-- one the stored score was computed from), answers each group of `fetches` as its generation (the
-- shard's change counter when the shard holds none of it) and its best `top` members, then up to
-- `most` of the shard's dirty groups.
function GROUP_OF.shard_step(cfg_key, window, board, rule, step)
  local base = base_of(cfg_key, window, board)
  -- On shard 0 (its tag has no "/<shard>"), where the scores are stored under it, and on a shard holding
  -- groups: one no membership reached is not in its config's groupedBy, so a drop of the member board
  -- would leave a rule written there (the group board's drop finds shard 0 alone once that board is gone).
  if not string.find(cfg_key, '/%d+}:cfg$') or redis.call('EXISTS', base .. 'groups') == 1 then
    GROUP_OF.rule_kept(base, rule)
  end
  local gens, dirty, clears = base .. 'gen', base .. 'dirty', step.clears
  for i = 1, #clears, 2 do
    if redis.call('HGET', gens, clears[i]) == clears[i + 1] then
      redis.call('SREM', dirty, clears[i])
      if redis.call('HEXISTS', base .. 'groups', clears[i]) == 0 then redis.call('HDEL', gens, clears[i]) end
    end
  end
  local rows, ex = {}, #step.fetches > 0 and group_members.exceptions_of(keyspace.sibling_key(cfg_key, 'cfg', window .. ':top'))
  for i, group in ipairs(step.fetches) do
    local gen = redis.call('HGET', gens, group) or redis.call('GET', base .. 'seq') or '0'
    rows[i] = { gen, (group_members.best_rows(group_key(base, group), step.top, ex or nil)) }
  end
  return rows, redis.call('SRANDMEMBER', dirty, step.most)
end

-- Shard 0 of a sharded member board: claims `groups` for one settle round (a later claim of a group
-- makes this round's score of it refused: it may have read older rows). Answers the round's token.
function GROUP_OF.claim(cfg_key, window, board, groups)
  local base = base_of(cfg_key, window, board)
  local token = redis.call('INCR', base .. 'seq')
  for _, group in ipairs(groups) do redis.call('HSET', base .. 'claims', group, token) end
  return token
end

-- Shard 0: stores the round's scores (group, score pairs; score "": the group lists no member) of
-- the groups still claimed by `token`, under the rule `rule` only. Answers the groups stored.
function GROUP_OF.store(cfg_key, window, board, rule, token, scores)
  local base = base_of(cfg_key, window, board)
  if redis.call('GET', base .. 'rule') ~= rule then return {} end
  local stored = {}
  for i = 1, #scores, 2 do
    local group, score = scores[i], scores[i + 1]
    if redis.call('HGET', base .. 'claims', group) == token then
      redis.call('HDEL', base .. 'claims', group)
      if score == '' then
        redis.call('ZREM', base .. 'top', group)
      else
        redis.call('ZADD', base .. 'top', score, group)
      end
      stored[#stored + 1] = group
    end
  end
  return stored
end

-- The group board's own config (field groupOf: its setting as JSON). A PUT without groupOf keeps the
-- stored one; a change keeps the data (the next settle recomputes every group by the new rule).
local function group_of_planned(cfg_key, settings, _, plan)
  local stored = plan and redis.call('HGET', cfg_key, 'groupOf') or false
  if settings.groupOf == nil then
    settings.groupOf = stored and cjson.decode(stored) or nil
    return
  end
  if not plan then return end
  local was, asked = stored and cjson.decode(stored) or {}, settings.groupOf
  for _, field in ipairs({ 'board', 'window', 'top', 'decay' }) do
    if was[field] ~= asked[field] then plan.changed = true end
  end
end

local function group_of_stored(cfg_key, settings)
  if type(settings.groupOf) == 'table' then
    redis.call('HSET', cfg_key, 'groupOf', cjson.encode(settings.groupOf))
  else
    redis.call('HDEL', cfg_key, 'groupOf')
  end
  return false
end

hooks.register_all('group_of', { 'config_planned', group_of_planned,
  'config_stored', group_of_stored, 'results_changed', member_changed,
  'watches', function(top_key) return bases_of(top_key) ~= nil end, 'window_dropped', window_dropped,
  'board_dropped', member_board_dropped, 'exceptions_changed', exceptions_changed,
  'config_kept', function(cfg_key) return redis.call('HEXISTS', cfg_key, 'groupedBy') == 1 end })
GROUP_OF.bases_of = bases_of
GROUP_OF.attach = attach
GROUP_OF.group_key = group_key
group_of.GROUP_OF = GROUP_OF
