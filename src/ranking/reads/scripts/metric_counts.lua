-- requires: call_state, reader, snapshot
-- metric_counts: each metric's count of some items in one window of a board with metrics (the metrics
-- option: a metric but the first keeps the window as "<window>~@<metric>" keys), after expiring what
-- fell out of each, so a row answers every metric as a read of that metric would.
-- Keys: cfg (the board config hash: holds the config version), then per metric, in the board's order,
--       slots (the window's slots index zset) and top (the window's results zset)
-- Args (reader.read_call, CALLS.metric_counts): the header with the one window, then items (the ids
--       joined by "\31", the unit separator, which no id holds)
-- Reply (reader.answer, CALLS.metric_counts): draining (1: some metric's window still holds expired
--       data), counts ({ per item, per metric: its sum, 0 when absent })
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function metric_counts(keys, args)
  local cfg_key = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.metric_counts)
  local items = {}
  for item in string.gmatch(arg.items, '[^\31]+') do items[#items + 1] = item end
  local draining, tops = 0, {}
  for k = 2, #keys, 2 do
    local err, more = snapshot.open_read(cfg_key, keys[k], keys[k + 1], header)
    if err then return redis.error_reply(err) end
    if more == 1 then draining = 1 end
    tops[#tops + 1] = keys[k + 1]
  end
  -- One ZMSCORE per metric (a page holds at most 1 000 ids: well inside unpack's reach), not one
  -- ZSCORE per id and metric.
  local by_metric = {}
  if #items > 0 then
    for m, top in ipairs(tops) do by_metric[m] = redis.call('ZMSCORE', top, unpack(items)) end
  end
  local counts = {}
  for i = 1, #items do
    for m = 1, #tops do counts[#counts + 1] = by_metric[m][i] or '0' end
  end
  return reader.answer(CALLS.metric_counts, { draining = draining, counts = counts })
end
