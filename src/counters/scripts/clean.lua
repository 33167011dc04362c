-- requires: keyspace, reader
-- counter_clean: one page of the cleaner over one bucket of the known index. For each index entry
-- after the cursor (lexicographic order, all scores 0) whose precision is due on this pass, deletes
-- the slices that left the retention (start <= now - samples * prec), then removes the entry from the
-- index only if its hash is now empty. Trim, emptiness check and removal happen in this one atomic
-- step, so an increment (itself atomic) is never lost and never leaves data outside the index; a second
-- cleaner running the same page finds nothing left to do. Each call also removes up to a page of the
-- bucket's names entries ({...}:names) whose counter left every retention (score <= now): they no
-- longer count as live, this frees their memory.
-- Keys: known (the bucket's known-counters index zset)
-- Args (reader.read_call, CALLS.clean): the header (no version, now, no windows), then
--   samples    samples kept per precision (count)
--   pass       pass number of the calling cleaner (a precision p is due when pass % max(1, floor(p / 60)) == 0)
--   cursor     the last member handled by the previous page ("" to start at the beginning)
--   page_size  most index entries visited by this call
-- Reply (reader.answer, CALLS.clean): next (the cursor, "" when the bucket is done), visited, due,
--   slices_removed, entries_removed, names_removed

-- Slice fields one page reads at most (HKEYS of each due counter's hash): a page ends before the due
-- entry that would take it past them (its first entry goes whatever its size). A counter's hash holds
-- its live slices (COUNTER_SAMPLES, up to 10 000) and those no cleaner took yet, so a page of
-- COUNTER_CLEAN_BATCH entries could read a million fields; most pages read far fewer than this.
local CLEAN_FIELDS = 2000

-- Deletes the slices of one due index entry that left its retention, and the entry when its hash is
-- then empty: answers the slices removed and 1 when the entry went (0 when it stays).
local function clean_entry(known_key, member, prec, cutoff)
  local hkey = keyspace.sibling_key(known_key, 'known', 'count:' .. member)
  local old = {}
  for _, field in ipairs(redis.call('HKEYS', hkey)) do
    local t = tonumber(field)
    if t == nil or t <= cutoff then old[#old + 1] = field end
  end
  for i = 1, #old, 1000 do
    redis.call('HDEL', hkey, unpack(old, i, math.min(i + 999, #old)))
  end
  if redis.call('EXISTS', hkey) ~= 0 then return #old, 0 end
  redis.call('ZREM', known_key, member)
  return #old, 1
end

local function clean(keys, args)
  local known_key = keys[1]
  local header, arg = reader.read_call(args, CALLS.clean)
  local samples, pass, page_size = tonumber(arg.samples), tonumber(arg.pass), tonumber(arg.page_size)
  local start = '-'
  if arg.cursor ~= '' then start = '(' .. arg.cursor end
  local members = redis.call('ZRANGE', known_key, start, '+', 'BYLEX', 'LIMIT', 0, page_size)
  local due, slices, dropped, read, visited = 0, 0, 0, 0, 0
  for _, member in ipairs(members) do
    local prec = tonumber(string.match(member, '^(%d+):'))
    if prec and prec > 0 and pass % math.max(1, math.floor(prec / 60)) == 0 then
      local size = redis.call('HLEN', keyspace.sibling_key(known_key, 'known', 'count:' .. member))
      if read > 0 and read + size > CLEAN_FIELDS then break end
      read, due = read + size, due + 1
      local removed, gone = clean_entry(known_key, member, prec, header.now_sec - samples * prec)
      slices, dropped = slices + removed, dropped + gone
    end
    visited = visited + 1
  end
  local names_key = keyspace.sibling_key(known_key, 'known', 'names')
  local gone = redis.call('ZRANGE', names_key, '-inf', header.now_ms, 'BYSCORE', 'LIMIT', 0, page_size)
  if #gone > 0 then redis.call('ZREM', names_key, unpack(gone)) end
  local next_cursor = ''
  if visited < #members or #members == page_size then next_cursor = members[visited] or '' end
  return reader.answer(CALLS.clean, {
    next = next_cursor, visited = visited, due = due,
    slices_removed = slices, entries_removed = dropped, names_removed = #gone,
  })
end
