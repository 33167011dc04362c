-- requires: aggregate, ingest, reader
-- ingest_apply: applies the events of one stream batch that land on one board shard, entry by entry,
-- and records in the same call how far the source got on this shard, so a message delivered again is
-- recognised. The general path: redeliveries, refusals, max / min / last boards (ingest_groups is the
-- fast path of a fresh batch on a sum board and hands everything else to this one).
-- Keys: cfg (board config hash: holds the config version), then per window w its slots index zset
--   and results zset, then the source's progress hash on this shard (same hash tag):
--                  last     the highest message id applied here ("<hi>-<lo>": stream id; JetStream: "<seq>-0")
--                  epoch    the highest lease epoch of the source's consumer seen here
--                  applied  events applied here, all time
--                  r:<id>   why message <id> was refused here, until its dead letter is written
-- Args (reader.read_call, CALLS.ingest_apply): the header (config version, now, expiry budget: most
--   expired-slot fields drained, the board's windows), then
--   epoch         the caller's lease epoch: a lower one than recorded is refused (a consumer that lost
--                 its lease to another instance must not write behind the new holder's back)
--   segments_max  segments.max, most live segments on this shard (0: the board takes none)
--   entries       JSON list of the entries, ids ascending, each { id (message id), item, amount
--                 (integer, non-zero), at_ms (event time, unix ms), segments (joined by commas, "" for
--                 none), actor ("" for none; ACTORS.split; kept as an HTTP increment's, actor_lib),
--                 resolved (1: the message named an alias and its shard refused it, the alias's block:
--                 sent again naming the canonical item, applied once whatever `last` says, by x:<id>) }
-- Reply (reader.answer, CALLS.ingest_apply): draining (0|1), due_ms (due time for the index, unix ms,
--   0: none), applied (events applied now), outcomes (one per entry: "a" applied now, "s" applied
--   before, "r:<reason>" refused (now or before: dead-letter it; AGGREGATE_MISMATCH on a max / min /
--   last board, AT_OUT_OF_SPAN, RETRACTED <actor|item> <until ms> (blocked, see actor_blocks.refusal),
--   SEGMENT_LIMIT, BOARD_FULL))
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (nothing applied), TB_INGEST_FENCED <epoch> (nothing applied)

-- The helpers (checks, the write, the progress) are ingest_lib's, shared with ingest_groups.

-- The outcome of an entry sent again resolved ("s" when its x:<id> says it was applied here, else as a
-- new entry's, its x:<id> recorded when accepted).
local function resolved_outcome(call, checks, entry)
  if redis.call('HEXISTS', call.progress, 'x:' .. entry.id) == 1 then return 's' end
  local reason = ingest.ingest_check(checks, entry)
  if reason then
    redis.call('HSET', call.progress, 'r:' .. entry.id, reason)
    return 'r:' .. reason
  end
  redis.call('HSET', call.progress, 'x:' .. entry.id, 1)
  return 'a'
end

-- Sorts the entries into outcomes ("s" seen before, "r:<reason>" refused, recorded now, "a" to apply)
-- and answers them, the entries to apply and the highest new message id (nil: none).
local function ingest_classify(call, checks, entries)
  local last_hi, last_lo = ingest.id_of(call.last)
  local outcomes, accepted = {}, {}
  local new_last = nil
  for _, entry in ipairs(entries) do
    local id = entry.id
    local hi, lo = ingest.id_of(id)
    if entry.resolved == 1 then
      outcomes[#outcomes + 1] = resolved_outcome(call, checks, entry)
      if outcomes[#outcomes] == 'a' then accepted[#accepted + 1] = entry end
      -- A later message of this shard is never older: none is skipped by moving `last` past it.
      if ingest.after(hi, lo, last_hi, last_lo) then new_last = id end
    elseif not ingest.after(hi, lo, last_hi, last_lo) then
      local refused = redis.call('HGET', call.progress, 'r:' .. id)
      outcomes[#outcomes + 1] = refused and ('r:' .. refused) or 's'
    else
      new_last = id
      -- A stream event adds an amount: a max / min / last board takes only scores (POST .../score).
      local reason = aggregate.mode() ~= 'sum' and 'AGGREGATE_MISMATCH' or ingest.ingest_check(checks, entry)
      if reason then
        redis.call('HSET', call.progress, 'r:' .. id, reason)
        outcomes[#outcomes + 1] = 'r:' .. reason
      else
        accepted[#accepted + 1] = entry
        outcomes[#outcomes + 1] = 'a'
      end
    end
  end
  return outcomes, accepted, new_last
end

local function ingest_apply(keys, args)
  local cfg_key = keys[1]
  local refused, header, arg, call = ingest.ingest_begin(keys, args, CALLS.ingest_apply)
  if refused then return refused end
  local draining, checks = ingest.ingest_prepare(call, header, tonumber(arg.segments_max))
  local outcomes, accepted, new_last = ingest_classify(call, checks, cjson.decode(arg.entries))
  local due_ms = ingest.ingest_write(cfg_key, call, accepted, #accepted, checks.holding_at, new_last, header.now_sec)
  return reader.answer(CALLS.ingest_apply, { draining = draining, due_ms = due_ms, applied = #accepted, outcomes = outcomes })
end
