-- requires: call_state, group_of, reader
-- group_scores_store: shard 0 of a sharded member board in a group board's settle round
-- (src/ranking/group-boards/sharded-settle.ts), where the group board's scores live. With token "":
-- claims `groups` for the round (group_of_lib's claim); else stores the round's `scores` of the groups
-- still claimed by `token`, under `rule` only (group_of_lib's store).
-- Keys: cfg (shard 0's config hash)
-- Args (reader.read_call, CALLS.group_scores_store): the header (no windows), then
--   board     the group board
--   window    the member board's window it ranks
--   rule      "<top> <decay>" the scores were computed with
--   token     "" to claim, else the round's token
--   groups    JSON [group, ...] to claim (token "")
--   scores    JSON [group, score ("": no listed member), ...] to store (token given)
-- Reply (reader.answer, CALLS.group_scores_store):
--   token     the round's token (a claim), else ""
--   stored    JSON [group, ...]: the groups whose score was stored
local function group_scores_store(keys, args)
  local cfg_key = keys[1]
  local _, arg = call_state.begin_named_call(keys, args, CALLS.group_scores_store)
  local of = group_of.GROUP_OF
  if arg.token == '' then
    local token = of.claim(cfg_key, arg.window, arg.board, cjson.decode(arg.groups))
    return reader.answer(CALLS.group_scores_store, { token = tostring(token), stored = '[]' })
  end
  local stored = of.store(cfg_key, arg.window, arg.board, arg.rule, arg.token, cjson.decode(arg.scores))
  return reader.answer(CALLS.group_scores_store, { token = '', stored = #stored == 0 and '[]' or cjson.encode(stored) })
end
