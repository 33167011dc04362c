-- requires: call_state, group_members, group_of, group_parts, hooks, snaprows, snapshot
-- group_history_lib (no table of its own: it only registers its hook): a group board's history
-- (snapshots of a rolling member window, archives of a calendar one), kept by the member window's own
-- boundary crossing (hook boundary_crossing). When the member window W crosses a boundary
-- (snapshot_lib's cross_boundary: the first call in a new slot, before it expires or applies
-- anything), W's listing is still its listing at that boundary, and so
-- are the groups' member zsets (group_of_lib keeps them in W's own atomic steps); and so are the
-- memberships, since a membership change crosses W's boundary first (group_member_set). Only the
-- groups' scores may lag (dirty marks): the crossing settles them first, at most the rows the call's
-- crossings may still take (snapshot_lib's crossing_work), and leaves the boundary for the next call
-- (the service sends it again) while some stay dirty: W takes nothing new until then, so the groups'
-- listing it stores is exact at the boundary. It is stored as W's own would be, under the group
-- board's base "<tag>:<W>%<G>:" (group_of_lib's keys), read by the history and archive routes of the
-- group board as any window's:
--   rolling W: snapshot_rows_lib's take_snapshot at the boundary (W's `snapshots` setting: keep, top)
--   calendar W: the closed period's archive at its start, written whole (the group board holds at
--     most MAX_GROUPS_PER_BOARD rows), the oldest beyond `keep` dropped; none for a period W did not
--     write, or when no group scored
-- Before either, the counted members of the listing's groups are recorded beside it (group_history_out_lib:
-- an item retraction on the member board rewrites the listing from them), within the call's crossing rows.
-- Either way <base>prev becomes the listing (the group board's previousRank). The scores use the
-- rule (top, decay) of the group board's last settle or membership change (<base>rule). Over a
-- sharded member board (each shard crossing on its own, no call seeing every shard) the crossing
-- records the shard's part of the listing instead (group_parts_lib), merged by the group board's
-- next settle round into the listing shard 0 keeps.
-- KEYS: 0

-- Stores the groups' listing `top_key` as the archive of the closed period starting at `start`.
local function store_archive(base, top_key, start, conf)
  local rows = snaprows.listing_rows(top_key, conf.top)
  if #rows == 0 then return 0 end
  local index = base .. 'snaps'
  for _, old in ipairs(redis.call('ZRANGE', index, 0, -conf.keep)) do
    redis.call('UNLINK', base .. 'snap:' .. old)
    group_of.GROUP_OF.counted_dropped(base, old)
    redis.call('ZREM', index, old)
  end
  redis.call('SET', base .. 'snap:' .. start, table.concat(rows))
  redis.call('ZADD', index, start, start)
  snaprows.store_previous(base .. 'prev', top_key, #rows, nil)
  return #rows
end

-- Settles the dirty groups at `base` within the call's crossing rows: true once none is dirty.
local function settled(base, member_top)
  if redis.call('SCARD', base .. 'dirty') == 0 then return true end
  local rule = redis.call('GET', base .. 'rule')
  if not rule then return true end
  local top, decay = string.match(rule, '^(%d+) (.+)$')
  local left = snapshot.crossing_work(0)
  if left <= 0 then return false end
  local more, spent = group_of.GROUP_OF.settle_base(base, tonumber(top), tonumber(decay), left, group_members.exceptions_of(member_top))
  snapshot.crossing_work(spent)
  return more == 0
end

-- Hook boundary_crossing: each group board over the window of `top_key` settled, then its listing at
-- the boundary stored (once: a call sent again finds it stored). False: left for the next call.
local function crossing(cfg_key, slots_key, top_key, conf, mark, interval_sec, origin_sec)
  local bases = group_of.GROUP_OF.bases_of(top_key)
  if not bases then return true end
  local calendar = (origin_sec or 0) > 0
  if calendar and not redis.call('ZSCORE', slots_key, mark) then return true end
  local at = calendar and mark or mark + interval_sec
  if tonumber(call_state.config_field(cfg_key, 'shards') or '1') > 1 then
    for _, base in ipairs(bases) do
      if not group_parts.crossed(cfg_key, base, mark, not calendar and interval_sec or nil, top_key) then return false end
    end
    return true
  end
  for _, base in ipairs(bases) do
    local groups = base .. 'top'
    if not redis.call('ZSCORE', base .. 'snaps', at) then
      if not settled(base, top_key) then return false end
      -- What an item retraction on the member board needs to rewrite the listing (group_history_out_lib).
      local lifetime_sec = not calendar and snaprows.snapshot_lifetime_sec(conf, interval_sec) + interval_sec or nil
      if not group_of.GROUP_OF.counted_recorded(base, groups, at, conf, top_key, lifetime_sec) then return false end
      if not snapshot.crossing_allowed(math.min(redis.call('ZCARD', groups), conf.top)) then return false end
      if calendar then
        if store_archive(base, groups, at, conf) == 0 then group_of.GROUP_OF.counted_dropped(base, at) end
      else
        snaprows.take_snapshot(base, groups, at, conf, interval_sec)
      end
    end
  end
  return true
end

hooks.register_all('group_of', { 'boundary_crossing', crossing })
