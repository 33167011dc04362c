-- views_lib: trending views (decay, hot, rising), prepended to every ranking script after keys_lib and
-- before window_lib. A view is one more results zset of the board, kept by the same script call that
-- changes a window it reads (window_lib calls view_window_changed after every change of an item's sum
-- in a window, write or expiry), so it is never recomputed by a job and expiry takes out of it exactly
-- what the expired slot put in.
-- KEYS: 0
-- Conventions: KEYS[1] is the board shard's config hash, whose field `views` (JSON, written by
-- board_put / shard_sync) lists the views; ARGV[2] is now (unix ms) in every script that changes
-- windows (board_put and shard_sync call views_load themselves). A view's keys are named after the
-- config key like a window's: <tag>:<view>:top (zset: the view's rank score per item), <tag>:<view>:items
-- (hash: hot's firstSeen, rising's since, per item) and <tag>:<view>:meta (hash: decay's landmark).
-- Scores cross to Redis as %.17g strings: Lua's own number-to-string conversion keeps 14 digits.

local VIEWS = { loaded = false, by_top = {}, by_name = {}, list = {}, now_sec = 0 }

local function view_num(x)
  return string.format('%.17g', x)
end

local function view_key(cfg_key, view_name, suffix)
  return sibling_key(cfg_key, 'cfg', view_name .. ':' .. suffix)
end

-- The views' code is built on first use in a call, not by the script's top level (which runs on every
-- call and would create all its closures each time): boards without views, most calls, pay one HGET.
local views_api

-- Reads the board shard's views (and rebases decay views to now). Every script that changes a window
-- or reads a view calls it once, before the first change; view_window_changed calls it when needed.
local function views_load(cfg_key, now_ms)
  VIEWS.loaded, VIEWS.by_top, VIEWS.by_name, VIEWS.list = true, {}, {}, {}
  VIEWS.now_sec = math.floor(now_ms / 1000)
  local json = redis.call('HGET', cfg_key, 'views')
  if json then views_api().load_views(cfg_key, json) end
end

local API = nil
views_api = function()
  if API then return API end
  -- Decay is forward decay: the zset holds g = sum of amount * 2^((slot start - L) / halfLife) for a
  -- landmark L, and the value as of now is g * 2^((L - now) / halfLife) (one factor for every item, so
  -- the zset's order is the view's order). L is the start of the current epoch of rebaseHalfLives
  -- half-lives, so exponents stay within about +-(rebaseHalfLives + the window's half-lives) however
  -- long the board lives, far from overflow. When the epoch changes, every g is multiplied by
  -- 2^(old L - new L) / halfLife = 2^(-k * rebaseHalfLives): a power of two, so the rebase is exact and
  -- changes no order. L never moves back (an instance with a late clock keeps the newer landmark).
  -- Forward decay rather than log space: amounts may be negative (log space holds no sign), and adding
  -- and subtracting a slot's exact share is what lets expiry take out exactly what the slot put in.
  local function decay_rebase(view, now_sec)
    local epoch_sec = view.halfLifeSec * view.rebaseHalfLives
    local wanted = math.floor(now_sec / epoch_sec) * epoch_sec
    local stored = tonumber(redis.call('HGET', view.meta, 'landmark') or '')
    if stored and stored >= wanted then
      view.landmark = stored
      return
    end
    if stored then
      local factor = 2 ^ ((stored - wanted) / view.halfLifeSec)
      local members = redis.call('ZRANGE', view.top, 0, -1, 'WITHSCORES')
      for i = 1, #members, 2 do
        local g = tonumber(members[i + 1]) * factor
        if g == 0 then
          redis.call('ZREM', view.top, members[i])
        else
          redis.call('ZADD', view.top, view_num(g), members[i])
        end
      end
    end
    redis.call('HSET', view.meta, 'landmark', wanted)
    view.landmark = wanted
  end

  -- views_load, once it found views.
  local function load_views(cfg_key, json)
    for _, view in ipairs(cjson.decode(json)) do
      view.top = view_key(cfg_key, view.name, 'top')
      view.items = view_key(cfg_key, view.name, 'items')
      view.meta = view_key(cfg_key, view.name, 'meta')
      view.source_top = sibling_key(cfg_key, 'cfg', view.window .. ':top')
      VIEWS.list[#VIEWS.list + 1] = view
      VIEWS.by_name[view.name] = view
      local sources = { view.source_top }
      if view.baseline then
        view.baseline_top = sibling_key(cfg_key, 'cfg', view.baseline .. ':top')
        sources[2] = view.baseline_top
      end
      for _, top in ipairs(sources) do
        VIEWS.by_top[top] = VIEWS.by_top[top] or {}
        table.insert(VIEWS.by_top[top], view)
      end
      if view.mode == 'decay' then decay_rebase(view, VIEWS.now_sec) end
    end
  end

  local function decay_add(view, item, slot_start, delta)
    local added = delta * 2 ^ ((slot_start - view.landmark) / view.halfLifeSec)
    local g = tonumber(redis.call('ZINCRBY', view.top, view_num(added), item))
    -- What is left once an item's last slot is taken out is rounding only (older slots weigh less than
    -- newer ones, so a real remainder is never this small next to what was just added or taken).
    if math.abs(g) <= view.zeroTolerance * math.abs(added) then redis.call('ZREM', view.top, item) end
  end

  -- hot: sign(s) * log10(max(|s|, 1)) + (firstSeen - epoch) / tau, s the item's sum in the window. An
  -- item is listed while s > 0; its firstSeen (the earliest event time seen) is kept while s != 0 and
  -- forgotten when its sum in the window returns to 0.
  local function hot_score(sum, first_seen_sec, view)
    local sign = sum > 0 and 1 or (sum < 0 and -1 or 0)
    return sign * math.log10(math.max(math.abs(sum), 1)) + (first_seen_sec - view.epochSec) / view.tauSec
  end

  local function hot_update(view, item, sum, at_sec)
    if sum == 0 then
      redis.call('HDEL', view.items, item)
      redis.call('ZREM', view.top, item)
      return
    end
    local first = tonumber(redis.call('HGET', view.items, item) or '')
    local seen = at_sec or VIEWS.now_sec
    if not first or seen < first then
      first = seen
      redis.call('HSET', view.items, item, view_num(first))
    end
    if sum > 0 then
      redis.call('ZADD', view.top, view_num(hot_score(sum, first, view)), item)
    else
      redis.call('ZREM', view.top, item)
    end
  end

  -- rising: observed o (sum in the short window), expected e = baseline sum scaled to the short window's
  -- period. No baseline yet (nothing in the baseline beyond what the short window holds) floors e at 1.
  -- Listed with (o - e)^2 / e when o > e and o >= minCount.
  local function rising_score(observed, baseline, view)
    local expected = baseline * view.windowPeriodSec / view.baselinePeriodSec
    if baseline - observed <= 0 then expected = math.max(expected, 1) end
    if observed < view.minCount or observed <= expected or expected <= 0 then return nil end
    return (observed - expected) ^ 2 / expected
  end

  local function rising_update(view, item)
    local observed = tonumber(redis.call('ZSCORE', view.source_top, item) or '0')
    local baseline = tonumber(redis.call('ZSCORE', view.baseline_top, item) or '0')
    local score = rising_score(observed, baseline, view)
    if score then
      if redis.call('ZADD', view.top, view_num(score), item) == 1 then
        redis.call('HSET', view.items, item, VIEWS.now_sec)
      end
    elseif redis.call('ZREM', view.top, item) == 1 then
      redis.call('HDEL', view.items, item)
    end
  end

  -- view_window_changed's work for the views reading `top_key` (loaded: see below).
  local function window_changed(top_key, slot_start, item, delta, sum, at_sec)
    for _, view in ipairs(VIEWS.by_top[top_key]) do
      if view.mode == 'decay' then
        decay_add(view, item, slot_start, delta)
      elseif view.mode == 'hot' then
        hot_update(view, item, sum, at_sec)
      else
        rising_update(view, item)
      end
    end
  end

  -- Unlinks every key of one view.
  local function drop(cfg_key, view_name)
    redis.call('UNLINK', view_key(cfg_key, view_name, 'top'), view_key(cfg_key, view_name, 'items'),
      view_key(cfg_key, view_name, 'meta'))
  end

  -- Builds a view (new, changed, or whose window was remade) from its windows' slots as they are: decay
  -- and hot take each slot oldest first (hot's firstSeen is then the start of the item's oldest slot),
  -- rising every item of its two windows. Costs one pass over the window's data, once per change.
  local function build_view(cfg_key, view)
    if view.mode == 'rising' then
      local seen = {}
      for _, top in ipairs({ view.source_top, view.baseline_top }) do
        for _, item in ipairs(redis.call('ZRANGE', top, 0, -1)) do
          if not seen[item] then
            seen[item] = true
            rising_update(view, item)
          end
        end
      end
      return
    end
    local slots_key = sibling_key(cfg_key, 'cfg', view.window .. ':slots')
    for _, start in ipairs(redis.call('ZRANGE', slots_key, 0, -1)) do
      local entries = redis.call('HGETALL', sibling_key(slots_key, 'slots', 'slot:' .. start))
      for i = 1, #entries, 2 do
        local item, amount = entries[i], tonumber(entries[i + 1])
        if view.mode == 'decay' then
          decay_add(view, item, tonumber(start), amount)
        else
          hot_update(view, item, tonumber(redis.call('ZSCORE', view.source_top, item) or '0'), tonumber(start))
        end
      end
    end
  end

  -- After a config change (board_put, shard_sync): drops the data of views that are gone, and rebuilds
  -- views that are new, whose definition changed, or whose window lost its data (`dropped_windows`: set
  -- of window names). `old_json`: the views stored before (or nil); the new ones are stored already.
  local function reconcile(cfg_key, old_json, dropped_windows, now_ms)
    local old = {}
    if old_json then
      for _, view in ipairs(cjson.decode(old_json)) do old[view.name] = view end
    end
    views_load(cfg_key, now_ms)
    for _, view in ipairs(VIEWS.list) do
      local before = old[view.name]
      old[view.name] = nil
      local stale = dropped_windows[view.window] or (view.baseline and dropped_windows[view.baseline])
      if before == nil or before.spec ~= view.spec or stale then
        drop(cfg_key, view.name)
        if view.mode == 'decay' then decay_rebase(view, VIEWS.now_sec) end
        build_view(cfg_key, view)
      end
    end
    for name, _ in pairs(old) do drop(cfg_key, name) end
  end
  API = { load_views = load_views, window_changed = window_changed, drop = drop, reconcile = reconcile }
  return API
end

-- Called by window_lib after an item's sum in a window (its results zset `top_key`) changed by `delta`
-- in the slot starting at `slot_start` to `sum`; `at_sec` is the event's time for a write, nil for
-- expiry.
local function view_window_changed(top_key, slot_start, item, delta, sum, at_sec)
  if not VIEWS.loaded then views_load(KEYS[1], tonumber(ARGV[2])) end
  if VIEWS.by_top[top_key] then views_api().window_changed(top_key, slot_start, item, delta, sum, at_sec) end
end

-- See drop above.
local function drop_view(cfg_key, view_name)
  views_api().drop(cfg_key, view_name)
end

-- See reconcile above.
local function views_reconcile(cfg_key, old_json, dropped_windows, now_ms)
  views_api().reconcile(cfg_key, old_json, dropped_windows, now_ms)
end
