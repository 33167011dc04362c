-- requires: board_write, group_of, group_parts, idempotency, keyspace, reader, snapshot, window
-- group_member_set: makes an item of the member board a member of a group of a group board (or of
-- none), retry-safe, on the member board's shard: the item leaves its previous group, and both
-- groups are marked for their scores to be recomputed (group_of_lib). The first membership names the
-- group board in the member board's config (groupedBy), so its writes and drains keep the groups'
-- member scores from then on.
-- It crosses the member window's boundary first: a group board's history at a boundary holds the
-- memberships of that boundary (group_history_lib). Then it expires what left the member window (within
-- the call's budget, as a read does): the next boundary's crossing finds the window's listing then, not
-- slots that had left it before this call moved its mark.
-- Keys: cfg (the member board's config hash)
-- Args (reader.read_call, CALLS.group_member_set): the header (the member board's config version,
--   now, the member window's rule), then
--   board      the group board
--   window     the member board's window it ranks
--   item       the item id
--   group      the group id ("": no group: the item leaves its group)
--   rule       "<top> <decay>" the group board scores groups by (group_of_lib's rule)
--   boards, groups, per_group, members   the limits: group boards per member board, groups per
--              group board, members per group, members per group board
--   recorded_members   counted members the records of the group board's kept listings hold together
--              (group_history_out_lib), kept for its crossings
--   idem_key, idem_fingerprint, idem_context, idem_retention   idem_lib's (idem_key "": none)
-- Reply (reader.answer, CALLS.group_member_set, after idem_lib's outcome and context):
--   previous   the group the item was in ("": none)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_CROSSING (the boundary left for the next call), TB_QUOTA groupBoards|groups|groupSize|groupMembers <held>
--   (nothing changed)
local function group_member_set(keys, args)
  local cfg_key = keys[1]
  local answer, header, arg, idem = board_write.begin_board_write(keys, args, CALLS.group_member_set)
  if answer then return answer end
  local rule, base = header.windows[1], keyspace.sibling_key(cfg_key, 'cfg', arg.window .. ':')
  snapshot.cross_window_of(cfg_key, base .. 'slots', base .. 'top', header.now_sec, rule.interval_sec, rule.origin_sec)
  window.expire_window(base .. 'slots', base .. 'top', header.now_sec, rule.period_sec, rule.interval_sec, header.budget, rule.origin_sec)
  local limits = {
    rule = arg.rule,
    boards = tonumber(arg.boards),
    groups = tonumber(arg.groups),
    per_group = tonumber(arg.per_group),
    members = tonumber(arg.members),
    recorded_members = tonumber(arg.recorded_members),
  }
  local previous, refused = group_of.GROUP_OF.set_member(cfg_key, arg.window, arg.board, arg.item, arg.group, limits)
  if refused then return redis.error_reply(refused) end
  -- Before this slot the shard held no member: its parts of earlier listings are empty (group_parts_lib).
  local slot = window.current_slot(header.now_sec, rule.interval_sec, rule.origin_sec)
  group_parts.attached(keyspace.sibling_key(cfg_key, 'cfg', arg.window .. '%' .. arg.board .. ':'), slot)
  local reply = reader.answer(CALLS.group_member_set, { previous = previous })
  return idempotency.idem_finish(cfg_key, 'cfg', idem, header.now_ms, reply)
end
