-- requires: board_write, keyspace, reader
-- alias_put: names `alias` a spelling of `item` on shard 0 of a board (PUT .../aliases/:alias), the
-- board's alias map: "<tag>:aliases" (hash: alias -> canonical item), "<tag>:aliasruns" (alias -> the
-- merge's run id: what its records on the alias's and the canonical's shards are keyed by) and
-- "<tag>:aliasof" (canonical -> how many aliases name it). No chains: an item named as canonical that
-- is itself an alias stands for its own canonical item; an alias that other aliases name as canonical,
-- or one already naming another item, is refused (conflict); a board holding `most` aliases refuses a
-- new one (full). Nothing is stored by a refusal.
-- Keys: cfg (shard 0's config hash: holds the config version)
-- Args (reader.read_call, CALLS.alias_put): the header (no windows), then alias, item (the canonical
--   item as sent), run (the id of a new merge), most (aliases the board may hold)
-- Reply (reader.answer, CALLS.alias_put): status (created | exists | conflict | full), item (the
--   canonical item after resolving), run (the merge's: the new one, or the one stored), held (aliases
--   the board holds)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function alias_put(keys, args)
  local cfg_key = keys[1]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.alias_put)
  if refused then return refused end
  local aliases = keyspace.sibling_key(cfg_key, 'cfg', 'aliases')
  local runs, targets = keyspace.sibling_key(cfg_key, 'cfg', 'aliasruns'), keyspace.sibling_key(cfg_key, 'cfg', 'aliasof')
  local item = redis.call('HGET', aliases, arg.item) or arg.item
  local held = redis.call('HLEN', aliases)
  local answer = { status = 'conflict', item = item, run = '', held = held }
  local existing = redis.call('HGET', aliases, arg.alias)
  if existing == item then
    answer.status, answer.run = 'exists', redis.call('HGET', runs, arg.alias)
  elseif existing or item == arg.alias or redis.call('HEXISTS', targets, arg.alias) == 1 then
    answer.status = 'conflict'
  elseif held >= tonumber(arg.most) then
    answer.status = 'full'
  else
    redis.call('HSET', aliases, arg.alias, item)
    redis.call('HSET', runs, arg.alias, arg.run)
    redis.call('HINCRBY', targets, item, 1)
    answer.status, answer.run, answer.held = 'created', arg.run, held + 1
  end
  return reader.answer(CALLS.alias_put, answer)
end
