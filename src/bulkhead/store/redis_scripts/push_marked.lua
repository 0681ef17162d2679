-- uses: push_lib
-- TakenMarks::PushMarked (store/taken_marks.h): jobs taken from elsewhere, each with its mark, in
-- one step. ARGV: P, node, until (µs), now (µs), then per job: jid, value, score, mark. Returns one
-- integer per job: 1 (added, and its mark kept until `until` in {NS}:taken), or 0 when its jid is
-- held, its mark is held with an expiry after `now`, or an earlier job of the same call has either.
local node, until_us, now_us = ARGV[2], ARGV[3], tonumber(ARGV[4])
local jids, values, scores, marks = {}, {}, {}, {}
for i = 5, #ARGV, 4 do
  jids[#jids + 1] = ARGV[i]
  values[#values + 1] = ARGV[i + 1]
  scores[#scores + 1] = ARGV[i + 2]
  marks[#marks + 1] = ARGV[i + 3]
end
local held = call_many('HMGET', JOBS, jids)
local res, add, seen, kept = {}, {}, {}, {}
for k, jid in ipairs(jids) do
  local mark = marks[k]
  local until_held = redis.call('ZSCORE', P .. 'taken', mark)
  local ok = not held[k] and not seen['j' .. jid] and not seen['m' .. mark] and
             not (until_held and tonumber(until_held) > now_us)
  seen['j' .. jid] = true
  seen['m' .. mark] = true
  add[k] = ok
  res[k] = ok and 1 or 0
  if ok then
    kept[#kept + 1] = until_us
    kept[#kept + 1] = mark
  end
end
add_jobs(node, jids, values, scores, add)
call_many('ZADD', P .. 'taken', kept, 2)
return res
