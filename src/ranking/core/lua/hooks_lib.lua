-- module: hooks
-- hooks_lib: where board options (src/ranking/options/<option>/) plug into the core. An option's
-- module registers its functions here when the library loads (its main chunk runs once per FUNCTION
-- LOAD); the core calls each list in registration order and names no option.
-- KEYS: 0
-- A board's config names the options it enables (config field `options`, written by board_put and
-- shard_sync from the options' config_stored answers, and by an option's own writers: call_lib's
-- enable_option), so a call on it runs the hot hooks (HOT below) of those options only (call_lib's
-- hooks_of): an option a board does not enable costs its calls nothing. The others run on every board:
-- the config's, the drops', and those a calendar window's expiry and history ask (its windows, not the
-- field, tell that a board has one: slots_draining answers nil at once on a rolling window).
-- Every hook still checks the config itself, and a config naming no options (written before the
-- field) runs every option's hooks.
-- The hooks, and what each function is given and answers:
--   results_changed(top_key, item, score, tiebreak)  the item's score in the window of `top_key` is
--                                       now `score` (0: it left); every change of a window's results
--                                       calls them; `tiebreak` (a decimal string) on a board keeping
--                                       pairs (aggregate_lib), nil where the change names none
--   tiebreak(top_key, item)             the board's tiebreak order ("asc" | "desc") and the item's
--                                       tiebreak held in the window (nil: none), or nil: no tiebreak
--   window_dropped(base, starts)        the window "<tag>:<window>:" and its keys go (drop_window);
--                                       `starts`: the starts of the slots it held
--   window_copies(cfg_key, window)      the bases ("<tag>:<window>~<copy>:") of the option's copies of
--                                       the board's `window` (a segment's), which go with it
--   slot_leaving(slots_key, top_key, start, budget)  the slot starting at `start` expires: the option
--                                       drains what it keeps of it first (at most about `budget`
--                                       fields); answers the budget left and whether none is left
--   slot_packed(slots_key, start, read)  what the option holds of the slot starting at `start` beside
--                                       its hash (a tail board's packed records): nil (nothing), their
--                                       count, or (`read`) their (item, count) pairs, flat (span reads),
--                                       or (`read` 'key') the list holding them (span_stage copies it)
--   packed_take(key, records)           about `records` records taken off the front of `key`, a copy
--                                       of a slot_packed list: their pairs, flat, and their number
--   window_siblings(cfg_key, window)    the names of the windows the option keeps beside the board's
--                                       `window` under its snapshot setting (a metric's, metrics_lib):
--                                       they cross its boundaries and drop their history with it
--   board_dropped(cfg_key, drop_key, budget)  a deleted board's drop step (board_drop_step), its windows
--                                       gone: unlinks the option's own keys of the shard, at most about
--                                       `budget`; answers the budget left and whether none is left
--   window_settled(slots_key, top_key, now_sec, interval_sec, budget)  a rolling window's expiry
--                                       found no expired slot left: the option's own bounded upkeep;
--                                       answers the budget left and when it is next due (unix s; nil:
--                                       no due of its own; false: due again at the next call)
--   slot_expired(slots_key, start)      the slot starting at `start` left the window (expire_window)
--   drained_weight(top_key)             the commands the option runs for an expired field a drain takes
--                                       from the window `top_key` beyond a results_changed hook's share
--                                       (drain_lib weighs the field by them)
--   slots_draining(slots_key, origin_sec)  a window's expiry is due: nil, or what drains along with it
--                                       (the first answer): { take(slot_start, entries) given each
--                                       pass's drained (item, value) pairs, finish(budget) answering
--                                       the budget left and whether its own work remains }
--   slots_kept(top_key)                 a window's expiry is due: nil when its slots hold sums (expiry
--                                       subtracts what it drains), else the first answer: { per_pass(
--                                       slots_key, budget) the fields one pass takes, settle(slots_key,
--                                       top_key, slot_start, live_from, entries, changed) the drained
--                                       (item, value) pairs taken out of the results, answering the
--                                       reads it spent beyond them }
--   any_sign(cfg_key)                  true when the board lists every score its windows hold, not
--                                       only those above 0 (order_lib's listed; asked once per call)
--   period_closed(slots_key, start, conf, expire_sec)  a calendar window's slot starting at `start`
--                                       closed (snapshot_lib's cross_boundary; conf: its history
--                                       setting; expire_sec > 0: its history expires, a segment's)
--   history_dropped(base)               the history of the window "<base>" goes (drop_snapshots)
--   snapshot_taken(base, until_sec, rows)  every one is called: a rolling window's snapshot (a
--                                       board's or a segment's, snaprows' take_snapshot) stored `rows`
--                                       (its texts; a listing stored in pages, each page's), which no
--                                       read shows from `until_sec` (unix s) on
--   segment_archived(cfg_key, items)    every one is called: rows of `items` were written into a
--                                       segment's calendar archive (archive_held_lib)
--   archives_left(cfg_key, items)       every one is called: `items` may no longer have a row in any
--                                       archive of one window of the shard (archive_held_lib: trimmed,
--                                       retracted, their newest archive dropped)
--   boundary_crossing(cfg_key, slots_key, top_key, conf, mark, interval_sec, origin_sec)  the board's
--                                       window crosses the boundary after the slot starting at `mark`
--                                       (snapshot_lib's cross_boundary, before the window's own
--                                       listing): the option stores what it derives from the window's
--                                       listing then; false: left for the next call (CROSSING_ERROR)
--   item_history_out(cfg_key, top_key, record, item, budget, costs)  an item retraction's last part
--                                       (retract_item): the option takes `item` out of the listings it
--                                       derives from the window of `top_key` and keeps, within `budget`
--                                       units (costs: retract_item's weights), its cursors in the
--                                       retraction's `record`; answers the units left (0: not done)
--   item_left(top_key, item)            the item left the window results `top_key` (its score there
--                                       went to 0 or it was removed: results_changed, add_unwatched)
--   windows_dropped(cfg_key)            a config write (board_put, shard_sync) dropped windows' data
--   prune_step(cfg_key, entries)        one bounded step of what the option left to prune after
--                                       windows_dropped (prune_lib): about `entries` entries; answers
--                                       the entries left and whether its part is done
--   prune_items(cfg_key, items)         every one is called: a write is about to add `items` while the
--                                       shard prunes (prune_lib's settle): the option forgets their
--                                       entries now if no window holds them
--   rank(top_key, item)                 the item's rank when the option decides it (0: not ranked),
--                                       else nil; the first answer wins, none: competition rank
--   watches(top_key)                    whether changes of these results must call results_changed
--                                       (false for every hook: a write may take the unwatched path)
--   write_opened(windows)               every one is called: a write's call (snapshot_lib's open_write,
--                                       its windows expired and before it applies anything) may
--                                       prepare what its ranks read; it may raise a TB_CROSSING error
--                                       to leave the rest of that work to the call sent again
-- A window's sums (every call runs these: a board's views are its own config field, not in `options`;
-- a write asks reads_sums only on a board holding views):
--   reads_sums(top_key)                 true when the option reads the sums of the window (views):
--                                       a change of them must then take the watched path
--   sum_changed(top_key, slot_start, item, delta, sum, at_sec, slot_sum)  every one is called: the
--                                       item's sum in the window's slot starting at `slot_start` moved
--                                       by `delta`, to `sum` in the window (at_sec: the event's time;
--                                       nil: expiry); slot_sum: its new sum in that slot when the caller
--                                       just wrote it (window.add_amount's; `sum` then as the results
--                                       hold it), else nil
-- The board config (board_put, shard_sync; `settings`: the options' settings by field, decoded JSON):
--   config_planned(cfg_key, settings, reset, plan)  a PUT: fills each absent setting with the stored
--                                       one (plan nil: a new board, the default); a change sets
--                                       plan.changed, and plan.drop_all when the windows' data goes
--                                       (refused without reset: a line in plan.problems); the plan
--                                       also holds wanted (the PUT's windows), shards (its count),
--                                       and `compared`: functions given the plan once the windows are
--                                       compared (plan.to_drop: the windows whose data goes)
--   config_differs(cfg_key, settings)   shard_sync: true when the shard's data must go for the change
--                                       (an option none of whose settings drops data registers none)
--   config_stored(cfg_key, settings)    writes the settings into the config hash; answers true when
--                                       the board enables the option (its hot hooks may answer)
--   config_kept(cfg_key)                true when the config hash holds a state of the option's own
--                                       writers (moderation's states, an actor's weight): a PUT
--                                       changing nothing names the option in `options` again
-- The order of a window's results (order_lib asks them; an answer nil: not decided, ask the next):
--   ascending(top_key)                  true when lower scores come first (pages, places and counts
--                                       of an option answering it follow: page, position, ahead, rank)
--   strict(top_key)                     true when ranks are the order's positions
--   page(top_key, first, last, marks)   positions first..last as ZREVRANGE WITHSCORES answers them
--   position(top_key, item)             the item's 0-based place (false: not decided by it)
--   positions(top_key, items)           the 0-based places of `items` (item -> place, absent: not
--                                       listed) in fewer commands than one position each, or nil
--   mark_of(top_key, item)              the item's mark among equal scores across shards
--   ahead(top_key, score, mark)         the items ahead of (score, mark)
--   append_marks(reply, keys, first_top, window_count, item)   every one is called: a write's marks
-- Actors' contributions (boards with actors; event fields, every write may name an actor):
--   actor_counted(slots_key, slot_start, actor, item, amount)  what the actor's event adds to the item
--                                       in that slot of the window (each hook given the last's answer)
--   actor_added(slots_key, top_key, slot_start, actor, item, counted, sent)  the actor's event added
--                                       `counted` of the `sent` amount to the item in that slot
--   actor_amount(slots_key, slot_start, actor, item, amount)  what an event of the actor sending
--                                       `amount` adds to the item in that slot of the window (a
--                                       weight, a cap), else nil: the amount
--   actor_weighs(actor)                 true when actor_amount may answer another amount than sent
--   actor_moved(slots_key, actor, item, before, after)  every one is called: the actor's contribution
--                                       to the item in one slot of that window went from adding
--                                       `before` to `after` (added, taken back, expired, retracted,
--                                       re-weighted)
--   exceptions(top_key)                 items the listing leaves out, or the only ones it lists: nil
--                                       (none), or { only = bool, items = { id, ... } } (bounded: the
--                                       option's limit); order_lib then closes the gaps they leave
--   exceptions_ahead(top_key, ex, count, score)  how many listed exceptions of order_lib's record `ex`
--                                       (ex.asked: their list; order.placed places one) sit in the
--                                       first `count` places, ahead of a record of `score`, counted
--                                       by the option its own way, or nil: order_lib counts them
--   group_changed(cfg_key, item, group) every one is called: the item's group on the shard is now
--                                       `group` (groups_lib's assign; false: none, forget)
--   exceptions_changed(cfg_key, items)  every one is called: the exceptions of the shard's listings
--                                       changed for `items` (nil: any item; moderation)
--   history_exceptions(top_key, ex)     every one is called, each given the last's answer: the
--                                       exceptions `ex` (the hook exceptions' answer, nil: none) a read
--                                       of the window's kept listings applies, with the items only
--                                       those listings still hold (moderation: archived items of
--                                       moderated groups, snapshot_shown_lib's exceptions_of)

hooks.results_changed = {}
hooks.tiebreak = {}
hooks.window_dropped = {}
hooks.window_copies = {}
hooks.slot_leaving = {}
hooks.slot_packed = {}
hooks.packed_take = {}
hooks.window_siblings = {}
hooks.board_dropped = {}
hooks.window_settled = {}
hooks.slot_expired = {}
hooks.drained_weight = {}
hooks.slots_draining = {}
hooks.slots_kept = {}
hooks.any_sign = {}
hooks.period_closed = {}
hooks.history_dropped = {}
hooks.snapshot_taken = {}
hooks.archives_left = {}
hooks.segment_archived = {}
hooks.boundary_crossing = {}
hooks.item_history_out = {}
hooks.item_left = {}
hooks.windows_dropped = {}
hooks.prune_step = {}
hooks.prune_items = {}
hooks.rank = {}
hooks.watches = {}
hooks.write_opened = {}
hooks.reads_sums = {}
hooks.sum_changed = {}
hooks.config_planned = {}
hooks.config_differs = {}
hooks.config_stored = {}
hooks.config_kept = {}
hooks.ascending = {}
hooks.strict = {}
hooks.page = {}
hooks.position = {}
hooks.positions = {}
hooks.mark_of = {}
hooks.ahead = {}
hooks.append_marks = {}
hooks.actor_counted = {}
hooks.actor_added = {}
hooks.actor_amount = {}
hooks.actor_weighs = {}
hooks.actor_moved = {}
hooks.exceptions = {}
hooks.exceptions_ahead = {}
hooks.group_changed = {}
hooks.exceptions_changed = {}
hooks.history_exceptions = {}

-- Hooks every call of an enabled option's board runs (the others: every call runs them).
local HOT = { 'results_changed', 'tiebreak', 'window_settled', 'slot_expired', 'drained_weight', 'rank', 'watches',
  'write_opened', 'ascending', 'strict', 'page', 'position', 'positions', 'mark_of', 'ahead', 'append_marks',
  'actor_amount', 'actor_weighs', 'actor_moved', 'exceptions', 'exceptions_ahead', 'group_changed' }

-- The option of each registered function, hook by hook (the same places as the lists).
local OWNER = {}

-- Adds `fn`, a function of the option `option`, to the hook `hook`; an unknown hook fails the
-- library's load.
function hooks.register(hook, fn, option)
  local list = hooks[hook]
  if not list or hook == 'register' or hook == 'register_all' or hook == 'export_all' or hook == 'flag_planned'
    or hook == 'option_of' or hook == 'only' then
    error('hooks_lib: no hook "' .. hook .. '"')
  end
  if not option then error('hooks_lib: hook "' .. hook .. '" registered without its option') end
  list[#list + 1] = fn
  OWNER[hook] = OWNER[hook] or {}
  OWNER[hook][#list] = option
end

-- Adds the functions of the option `option` to their hooks: `by_hook` lists each hook's name, then its
-- function (hook_1, fn_1, hook_2, fn_2, ...), an option's one registration. A list, not a table keyed
-- by hook: FUNCTION LOAD runs the main chunk without pairs or next, which walking one would need.
function hooks.register_all(option, by_hook)
  for i = 1, #by_hook, 2 do hooks.register(by_hook[i], by_hook[i + 1], option) end
end

-- Sets the fields an option's module `module` (its table) shares with the modules and handlers that
-- require it: `by_name` lists each field's name, then its value (name_1, value_1, ...), as register_all
-- lists hooks, and for the same reason.
function hooks.export_all(module, by_name)
  -- A nil value would leave a hole the list's length may stop at: fail the load instead.
  if #by_name % 2 == 1 then error('hooks_lib: export_all of "' .. tostring(by_name[#by_name]) .. '" without its value') end
  for i = 1, #by_name, 2 do
    if by_name[i + 1] == nil then error('hooks_lib: export_all of "' .. by_name[i] .. '" without its value') end
    module[by_name[i]] = by_name[i + 1]
  end
end

-- The config_planned of an option whose setting is a flag named as its config field `field` ("1": on):
-- absent, the stored one (off for a new board); a change keeps the windows' data.
function hooks.flag_planned(field)
  return function(cfg_key, settings, _, plan)
    local stored = plan ~= nil and redis.call('HGET', cfg_key, field) == '1'
    if settings[field] == nil then settings[field] = stored end
    if plan and settings[field] ~= stored then plan.changed = true end
  end
end

-- The option of the `i`th function of the hook `hook`.
function hooks.option_of(hook, i)
  return OWNER[hook][i]
end

-- The hot hooks of the options in `enabled` (option -> true), each list in registration order.
function hooks.only(enabled)
  local lists = {}
  for _, hook in ipairs(HOT) do
    local list = {}
    for i, fn in ipairs(hooks[hook]) do
      if enabled[hooks.option_of(hook, i)] then list[#list + 1] = fn end
    end
    lists[hook] = list
  end
  return lists
end
