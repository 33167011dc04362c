-- requires: board_views, call_state, hooks, keyspace, reader, snapshot, snapshot_kept, stored_windows, window_drop
-- shard_sync: makes one shard k > 0 of a sharded board hold the config of shard 0 (the authority):
-- windows whose period, interval or creation time differ, or that are gone, lose their data on this
-- shard; a change of the shard count drops every window's data (items move between shards). A config
-- of the same or an older revision than the one held is ignored, so a repeated or late sync (two PUTs
-- racing) never moves a shard back.
-- Keys: cfg (the shard's config hash: version, revision, windows (call_lib), shards, createdAtMs, maxItems)
-- Args (reader.read_call, CALLS.shard_sync): the header (no config version; now: the creation time of
-- the shard's config; no windows), then the authoritative config (shard 0's):
--   version       its version
--   windows       its windows, JSON array of { name, periodSec, intervalSec, createdAtMs }
--   shards        its shard count
--   revision      its revision (grows with every change on shard 0)
--   max_items     its maxItems (0: none)
--   views         its views, JSON array ("[]": none); rebuilt here as board_put does
--   aggregate     its aggregate (sum, max, min, last): a change drops every window's data
--   options       its options' settings, JSON object by field (absent: none, each option's default); an
--                 option may ask a change to drop every window's data (hooks_lib config_differs)
-- Reply (reader.answer, CALLS.shard_sync): status: synced, unchanged (this revision or a newer one is
--   already held), or dropping (the shard's board was deleted and its keys are not all dropped yet:
--   nothing is written)
local function shard_sync(keys, args)
  local cfg_key = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.shard_sync)
  local revision, now_ms = tonumber(arg.revision), header.now_ms
  -- A late copy onto a shard being dropped (board_delete) would bring the board back over its old keys.
  if redis.call('EXISTS', keyspace.sibling_key(cfg_key, 'cfg', 'dropcfg')) == 1 then return reader.answer(CALLS.shard_sync, { status = 'dropping' }) end
  if tonumber(redis.call('HGET', cfg_key, 'revision') or '-1') >= revision then
    call_state.keep_options(cfg_key)
    -- A config stored before the windows' text takes it now, as board_put's on shard 0 (call_lib).
    local held = redis.call('HGET', cfg_key, 'windows')
    if held and stored_windows.windows_are_json(held) then stored_windows.store_windows(cfg_key, stored_windows.decode_windows(held)) end
    return reader.answer(CALLS.shard_sync, { status = 'unchanged' })
  end
  local wanted, windows = {}, cjson.decode(arg.windows)
  for _, w in ipairs(windows) do wanted[w.name] = w end
  local stored = redis.call('HGET', cfg_key, 'windows')
  local options = cjson.decode(arg.options)
  local reshard = redis.call('HGET', cfg_key, 'shards') ~= arg.shards or (redis.call('HGET', cfg_key, 'aggregate') or 'sum') ~= arg.aggregate
  for _, differs in ipairs(hooks.config_differs) do reshard = differs(cfg_key, options) or reshard end
  local dropped = {}
  if stored then
    for _, old in ipairs(stored_windows.decode_windows(stored)) do
      local new = wanted[old.name]
      if reshard or new == nil or new.periodSec ~= old.periodSec or new.intervalSec ~= old.intervalSec or new.createdAtMs ~= old.createdAtMs then
        window_drop.drop_window(cfg_key, old.name)
        snapshot_kept.drop_snapshots(cfg_key, old.name)
        dropped[old.name] = true
      elseif not snapshot_kept.same_snapshots(old.snapshots, new.snapshots) then
        snapshot_kept.drop_snapshots(cfg_key, old.name)
      end
    end
  end
  redis.call('HSET', cfg_key, 'version', arg.version, 'revision', revision, 'shards', arg.shards)
  stored_windows.store_windows(cfg_key, windows)
  -- Periods may have changed: the shard's slot due and indexed second (slot_due_lib) are found again.
  redis.call('HDEL', cfg_key, 'slotDueSec', 'indexedSec')
  redis.call('HSETNX', cfg_key, 'createdAtMs', now_ms)
  snapshot.store_snapshot_confs(cfg_key, windows)
  if arg.aggregate == 'sum' then redis.call('HDEL', cfg_key, 'aggregate') else redis.call('HSET', cfg_key, 'aggregate', arg.aggregate) end
  if arg.max_items == '0' then redis.call('HDEL', cfg_key, 'maxItems') else redis.call('HSET', cfg_key, 'maxItems', arg.max_items) end
  call_state.store_options(cfg_key, options, arg.version)
  local old_views = redis.call('HGET', cfg_key, 'views')
  if arg.views == '[]' then redis.call('HDEL', cfg_key, 'views') else redis.call('HSET', cfg_key, 'views', arg.views) end
  board_views.views_reconcile(cfg_key, old_views, dropped, now_ms)
  if next(dropped) then for _, dropped_all in ipairs(hooks.windows_dropped) do dropped_all(cfg_key) end end
  return reader.answer(CALLS.shard_sync, { status = 'synced' })
end
