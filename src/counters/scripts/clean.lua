-- requires: keyspace
-- counter_clean: one page of the cleaner over one bucket of the known index. For each index entry
-- after the cursor (lexicographic order, all scores 0) whose precision is due on this pass, deletes
-- the slices that left the retention (start <= now - samples * prec), then removes the entry from the
-- index only if its hash is now empty. Trim, emptiness check and removal happen in this one atomic
-- step, so an increment (itself atomic) is never lost and never leaves data outside the index; a second
-- cleaner running the same page finds nothing left to do. Each call also removes up to a page of the
-- bucket's names entries ({...}:names) whose counter left every retention (score <= now): they no
-- longer count as live, this frees their memory.
-- KEYS: 1
-- KEYS[1]        the bucket's known-counters index zset
-- ARGV[1]        now, unix milliseconds
-- ARGV[2]        samples kept per precision (count)
-- ARGV[3]        pass number of the calling cleaner (a precision p is due when pass % max(1, floor(p / 60)) == 0)
-- ARGV[4]        cursor: the last member handled by the previous page ("" to start at the beginning)
-- ARGV[5]        page size: most index entries visited by this call
-- Reply: { next cursor ("" when the bucket is done), entries visited, entries due, slices removed, entries removed,
--          names entries removed }
local function clean(keys, args)
  local now_sec = math.floor(tonumber(args[1]) / 1000)
  local samples = tonumber(args[2])
  local pass = tonumber(args[3])
  local cursor = args[4]
  local page_size = tonumber(args[5])
  local start = '-'
  if cursor ~= '' then start = '(' .. cursor end
  local members = redis.call('ZRANGE', keys[1], start, '+', 'BYLEX', 'LIMIT', 0, page_size)
  local due, slices, dropped = 0, 0, 0
  for _, member in ipairs(members) do
    local prec = tonumber(string.match(member, '^(%d+):'))
    if prec and prec > 0 and pass % math.max(1, math.floor(prec / 60)) == 0 then
      due = due + 1
      local hkey = keyspace.sibling_key(keys[1], 'known', 'count:' .. member)
      local cutoff = now_sec - samples * prec
      local old = {}
      for _, field in ipairs(redis.call('HKEYS', hkey)) do
        local t = tonumber(field)
        if t == nil or t <= cutoff then old[#old + 1] = field end
      end
      for i = 1, #old, 1000 do
        redis.call('HDEL', hkey, unpack(old, i, math.min(i + 999, #old)))
      end
      slices = slices + #old
      if redis.call('EXISTS', hkey) == 0 then
        redis.call('ZREM', keys[1], member)
        dropped = dropped + 1
      end
    end
  end
  local names_key = keyspace.sibling_key(keys[1], 'known', 'names')
  local gone = redis.call('ZRANGE', names_key, '-inf', tonumber(args[1]), 'BYSCORE', 'LIMIT', 0, page_size)
  if #gone > 0 then redis.call('ZREM', names_key, unpack(gone)) end
  local next_cursor = ''
  if #members == page_size then next_cursor = members[#members] end
  return { next_cursor, #members, due, slices, dropped, #gone }
end
