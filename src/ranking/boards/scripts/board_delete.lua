-- requires: call_state, idempotency, keyspace, moderation, reader, stored_windows
-- board_delete: detaches one shard of a board in O(1): its config hash is renamed "<tag>:dropcfg", so
-- every read and write of the shard (version_error) finds no board from this call on, and the stored
-- answers of the board go. Its other keys (slot hashes of every window, segments' windows, snapshots,
-- views, likes, contributions...) stay for board_drop_step, which unlinks them in bounded calls from
-- the windows and views the renamed config names. While "<tag>:dropcfg" exists, board_put and
-- shard_sync on the shard refuse, so a board of the same name never sees the old keys.
-- Keys: cfg (board config hash)
-- Args (reader.read_call, CALLS.board_delete): the header (no config version, now, no windows), then
--   idem_retention_ms    idempotency retention: the stored answers of the board go too
--   resend_retention_ms  retention of the keys the service gives Cluster writes (RESEND_GUARD_MS): those too
-- Reply (reader.answer, CALLS.board_delete): held (1 when the shard held a board, else 0)

-- A config left by an earlier drop still running and a late copy (a shard_sync that raced the
-- delete): the drop must reach the keys of both, so the renamed config names the windows, views and
-- group boards of both.
local function board_detach_merge(cfg_key, drop_key)
  for _, field in ipairs({ 'windows', 'views' }) do
    local decode = field == 'windows' and stored_windows.decode_windows or cjson.decode
    local merged, seen = decode(redis.call('HGET', drop_key, field) or '[]'), {}
    for _, entry in ipairs(merged) do seen[entry.name] = true end
    for _, entry in ipairs(decode(redis.call('HGET', cfg_key, field) or '[]')) do
      if not seen[entry.name] then merged[#merged + 1] = entry end
    end
    if #merged > 0 then redis.call('HSET', drop_key, field, cjson.encode(merged)) end
  end
  -- The group boards over either (groupedBy, "<window> <board>;..."): their groups go with the drop too.
  local grouped = redis.call('HGET', cfg_key, 'groupedBy')
  if grouped then
    local dropping = redis.call('HGET', drop_key, 'groupedBy')
    redis.call('HSET', drop_key, 'groupedBy', dropping and dropping .. ';' .. grouped or grouped)
  end
  redis.call('UNLINK', cfg_key)
end

local function board_delete(keys, args)
  local cfg_key = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.board_delete)
  idempotency.idem_forget(cfg_key, 'cfg', header.now_ms, tonumber(arg.idem_retention_ms))
  idempotency.idem_forget(cfg_key, 'cfg', header.now_ms, tonumber(arg.resend_retention_ms))
  if redis.call('HEXISTS', cfg_key, 'windows') == 0 then return reader.answer(CALLS.board_delete, { held = 0 }) end
  -- The shard's moderation states go at once (one hash of bounded size): a new board starts without.
  redis.call('UNLINK', moderation.MODERATION.states_key(cfg_key), moderation.MODERATION.effective_key(cfg_key))
  local drop_key = keyspace.sibling_key(cfg_key, 'cfg', 'dropcfg')
  if redis.call('EXISTS', drop_key) == 1 then
    board_detach_merge(cfg_key, drop_key)
  else
    redis.call('RENAME', cfg_key, drop_key)
  end
  return reader.answer(CALLS.board_delete, { held = 1 })
end
