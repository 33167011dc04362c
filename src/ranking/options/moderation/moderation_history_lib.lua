-- module: moderation_history
-- requires: call_state, groups, hooks, moderation
-- moderation_history_lib: the exceptions a read of a window's kept listings (archives, snapshots, the
-- previous listing: snapshot_shown_lib's exceptions_of) applies on a `groups: true` board. Besides
-- moderation_lib's (each item some window holds: its own state, else its group's), an item no window
-- holds any more whose row an archive keeps takes its latest group's state (groups_lib's archived
-- map) unless it holds a state of its own: hiding a group hides its items' rows in every archive kept,
-- also of periods whose items left every window before it was hidden (issue #49). The live reads'
-- exceptions (modeff) never hold those items: no window lists them.
-- KEYS: 0
-- Cost: one HGETALL of the group states, a lex range and an HMGET per group in the read's state
-- (hidden; on a review board allowed), an HMGET of the item states: at most the archived rows of the
-- moderated groups (keep x top per calendar window).

-- `ex` ({ only, items } or nil, moderation_lib's exceptions of the shard of `cfg_key`) with the
-- archived items of the groups in the state they name (hidden; on a review board allowed) that hold
-- no state of their own.
local function with_archived(cfg_key, ex)
  if not groups.grouped(cfg_key) then return ex end
  local M = moderation.MODERATION
  local only = ex ~= nil and ex.only
  local wanted = only and M.ALLOWED or M.HIDDEN
  local group_states, extra = redis.call('HGETALL', M.group_states_key(cfg_key)), {}
  for i = 1, #group_states, 2 do
    if group_states[i + 1] == wanted then
      for _, item in ipairs(groups.archived_in(cfg_key, group_states[i])) do extra[#extra + 1] = item end
    end
  end
  if #extra == 0 then return ex end
  local own, items = groups.hmget(M.states_key(cfg_key), extra), {}
  for i, item in ipairs(ex and ex.items or {}) do items[i] = item end
  for i, item in ipairs(extra) do
    if not own[i] then items[#items + 1] = item end
  end
  return { only = only, items = items }
end

-- Each config hash's answer in this call (call_state.call_cache): { ex (the exceptions it extended),
-- changes (groups.ARCHIVED's then), answer }; asked again once either differs.
local known = { seq = 0, by = {} }

-- hooks_lib `history_exceptions`, once a call per config hash and exceptions: a group board's
-- listings rank groups, not items (nothing to add).
local function history_exceptions(top_key, ex)
  if call_state.of_group_board(top_key) then return ex end
  local cfg_key, by = call_state.cfg_key_of_top(top_key), call_state.call_cache(known)
  local kept = by[cfg_key]
  if kept and kept.ex == ex and kept.changes == groups.ARCHIVED.changes then return kept.answer end
  local answer = with_archived(cfg_key, ex)
  by[cfg_key] = { ex = ex, changes = groups.ARCHIVED.changes, answer = answer }
  return answer
end

-- The exceptions a read of the kept listings of the shard of `cfg_key` applies now (a moderation
-- change's before and after: snapshot_shown_lib's index_change_begin).
function moderation_history.exceptions_of_cfg(cfg_key)
  return with_archived(cfg_key, moderation.MODERATION.exceptions_of_cfg(cfg_key))
end

hooks.register_all('moderation', { 'history_exceptions', history_exceptions })
