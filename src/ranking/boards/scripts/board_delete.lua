-- board_delete: removes every key of a board (config, likes, item data, each window's slots, index,
-- results and snapshots, each view's keys, every segment's windows and the segment indexes (the
-- board-wide claims too, on shard 0), the
-- actors' contributions and the retractions' blocks; a retraction's record expires by itself).
-- The board knows its keys: window names come from its config, slot hashes from each slots index.
-- KEYS: 2
-- KEYS[1]        board config hash
-- KEYS[2]        likes zset of the board
-- ARGV[1]        now, unix milliseconds
-- ARGV[2]        idempotency retention (ms): the stored answers of the board go too
-- ARGV[3]        retention (ms) of the keys the service gives Cluster writes (RESEND_GUARD_MS): those too
-- Reply: 1 when the board existed, else 0
local function board_delete(keys, args)
  begin_call(keys, args)
  local cfg_key, likes_key = KEYS[1], KEYS[2]
  idem_forget(cfg_key, 'cfg', tonumber(ARGV[1]), tonumber(ARGV[2]))
  idem_forget(cfg_key, 'cfg', tonumber(ARGV[1]), tonumber(ARGV[3]))
  local stored = redis.call('HGET', cfg_key, 'windows')
  if not stored then return 0 end
  for _, w in ipairs(cjson.decode(stored)) do
    drop_window(cfg_key, w.name)
    drop_snapshots(cfg_key, w.name)
  end
  for _, view in ipairs(cjson.decode(redis.call('HGET', cfg_key, 'views') or '[]')) do drop_view(cfg_key, view.name) end
  redis.call('UNLINK', cfg_key, likes_key, item_data_key(cfg_key), sibling_key(likes_key, 'likes', 'likesegs'),
    sibling_key(cfg_key, 'cfg', 'segs'), sibling_key(cfg_key, 'cfg', 'segdue'), sibling_key(cfg_key, 'cfg', 'seghist'),
    sibling_key(cfg_key, 'cfg', 'blocked'), sibling_key(cfg_key, 'cfg', 'segclaims'))
  return 1
end
