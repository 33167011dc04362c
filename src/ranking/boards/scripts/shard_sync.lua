-- requires: board_views, call_state, hooks, item_data, keyspace, snapshot, window
-- shard_sync: makes one shard k > 0 of a sharded board hold the config of shard 0 (the authority):
-- windows whose period, interval or creation time differ, or that are gone, lose their data on this
-- shard; a change of the shard count drops every window's data (items move between shards). A config
-- of the same or an older revision than the one held is ignored, so a repeated or late sync (two PUTs
-- racing) never moves a shard back.
-- KEYS: 1
-- KEYS[1]        the shard's config hash: version, revision, windows (JSON), shards, createdAtMs, maxItems
-- ARGV[1]        version of the authoritative config
-- ARGV[2]        windows of the authoritative config, JSON array of { name, periodSec, intervalSec, createdAtMs }
-- ARGV[3]        shards of the authoritative config
-- ARGV[4]        revision of the authoritative config (grows with every change on shard 0)
-- ARGV[5]        now, unix milliseconds (creation time of the shard's config)
-- ARGV[6]        maxItems of the authoritative config (0: none)
-- ARGV[7]        views of the authoritative config, JSON array ("[]": none); rebuilt here as board_put does
-- ARGV[8]        aggregate of the authoritative config (sum, max, min, last): a change drops every window's data
-- ARGV[9]        segments.max of the authoritative config (0: none)
-- ARGV[10]       actors of the authoritative config (1: on, 0: off)
-- ARGV[11]       the board options' settings of the authoritative config, JSON object by field (absent:
--                none, each option's default); an option may ask a change to drop every window's data
--                (hooks_lib config_differs)
-- Reply: "synced", "unchanged" (this revision or a newer one is already held), or "dropping" (the
--        shard's board was deleted and its keys are not all dropped yet: nothing is written)
local function shard_sync(keys, args)
  call_state.begin_call(keys, args)
  local cfg_key = KEYS[1]
  local revision = tonumber(ARGV[4])
  -- A late copy onto a shard being dropped (board_delete) would bring the board back over its old keys.
  if redis.call('EXISTS', keyspace.sibling_key(cfg_key, 'cfg', 'dropcfg')) == 1 then return 'dropping' end
  if tonumber(redis.call('HGET', cfg_key, 'revision') or '-1') >= revision then return 'unchanged' end
  local wanted = {}
  for _, w in ipairs(cjson.decode(ARGV[2])) do wanted[w.name] = w end
  local stored = redis.call('HGET', cfg_key, 'windows')
  local options = cjson.decode(ARGV[11] or '{}')
  local reshard = redis.call('HGET', cfg_key, 'shards') ~= ARGV[3] or (redis.call('HGET', cfg_key, 'aggregate') or 'sum') ~= ARGV[8]
  for _, differs in ipairs(hooks.config_differs) do reshard = differs(cfg_key, options) or reshard end
  local dropped = {}
  if stored then
    for _, old in ipairs(cjson.decode(stored)) do
      local new = wanted[old.name]
      if reshard or new == nil or new.periodSec ~= old.periodSec or new.intervalSec ~= old.intervalSec or new.createdAtMs ~= old.createdAtMs then
        window.drop_window(cfg_key, old.name)
        snapshot.drop_snapshots(cfg_key, old.name)
        dropped[old.name] = true
      elseif not snapshot.same_snapshots(old.snapshots, new.snapshots) then
        snapshot.drop_snapshots(cfg_key, old.name)
      end
    end
  end
  redis.call('HSET', cfg_key, 'version', ARGV[1], 'revision', revision, 'windows', ARGV[2], 'shards', ARGV[3])
  -- Periods may have changed: the shard's slot due and indexed second (slot_due_lib) are found again.
  redis.call('HDEL', cfg_key, 'slotDueSec', 'indexedSec')
  redis.call('HSETNX', cfg_key, 'createdAtMs', ARGV[5])
  snapshot.store_snapshot_confs(cfg_key, cjson.decode(ARGV[2]))
  if ARGV[8] == 'sum' then redis.call('HDEL', cfg_key, 'aggregate') else redis.call('HSET', cfg_key, 'aggregate', ARGV[8]) end
  if ARGV[6] == '0' then redis.call('HDEL', cfg_key, 'maxItems') else redis.call('HSET', cfg_key, 'maxItems', ARGV[6]) end
  if ARGV[9] == '0' then redis.call('HDEL', cfg_key, 'segmentsMax') else redis.call('HSET', cfg_key, 'segmentsMax', ARGV[9]) end
  if ARGV[10] == '1' then redis.call('HSET', cfg_key, 'actors', '1') else redis.call('HDEL', cfg_key, 'actors') end
  for _, stored_hook in ipairs(hooks.config_stored) do stored_hook(cfg_key, options) end
  local old_views = redis.call('HGET', cfg_key, 'views')
  if ARGV[7] == '[]' then redis.call('HDEL', cfg_key, 'views') else redis.call('HSET', cfg_key, 'views', ARGV[7]) end
  board_views.views_reconcile(cfg_key, old_views, dropped, tonumber(ARGV[5]))
  if next(dropped) then item_data.prune_item_data(cfg_key) end
  return 'synced'
end
