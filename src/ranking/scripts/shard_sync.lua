-- shard_sync: makes one shard k > 0 of a sharded board hold the config of shard 0 (the authority):
-- windows whose period, interval or creation time differ, or that are gone, lose their data on this
-- shard; a change of the shard count drops every window's data (items move between shards). The same version leaves everything as is, so a repeated sync is harmless.
-- KEYS: 1
-- KEYS[1]        the shard's config hash: version, windows (JSON), shards, createdAtMs
-- ARGV[1]        version of the authoritative config
-- ARGV[2]        windows of the authoritative config, JSON array of { name, periodSec, intervalSec, createdAtMs }
-- ARGV[3]        shards of the authoritative config
-- ARGV[4]        now, unix milliseconds (creation time of the shard's config)
-- Reply: "synced" or "unchanged"
local cfg_key = KEYS[1]
if redis.call('HGET', cfg_key, 'version') == ARGV[1] then return 'unchanged' end
local wanted = {}
for _, w in ipairs(cjson.decode(ARGV[2])) do wanted[w.name] = w end
local stored = redis.call('HGET', cfg_key, 'windows')
local reshard = redis.call('HGET', cfg_key, 'shards') ~= ARGV[3]
if stored then
  for _, old in ipairs(cjson.decode(stored)) do
    local new = wanted[old.name]
    if reshard or new == nil or new.periodSec ~= old.periodSec or new.intervalSec ~= old.intervalSec or new.createdAtMs ~= old.createdAtMs then
      drop_window(cfg_key, old.name)
    end
  end
end
redis.call('HSET', cfg_key, 'version', ARGV[1], 'windows', ARGV[2], 'shards', ARGV[3])
redis.call('HSETNX', cfg_key, 'createdAtMs', ARGV[4])
return 'synced'
