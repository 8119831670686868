package redis

import goredis "github.com/redis/go-redis/v9"

// leaseScript leases tokens of one flow's current window.
//
// KEYS[1] is a hash of tokens leased per window (field: window number),
// KEYS[2] a sorted set of the flow's live instances (score: when the
// instance's announcement expires, in Redis ms). Both carry the flow's hash
// tag, so they share a Redis Cluster slot.
//
// ARGV: 1 tokens wanted (the batch), 2 tokens the entry needs (at most the
// batch), 3 count per second, 4 threshold type (0 average local, 1
// global), 5 window in ms, 6 instance id, 7 announcement TTL in ms, 8
// prioritized (1 or 0), 9 the longest a prioritized entry may wait for the
// next window, in ms.
//
// It returns {granted, ms left in the window, live instances, tokens left
// in the window after the grant, ms a prioritized entry must wait (0: no
// token of the next window taken)}. Time is Redis's (TIME), so instances'
// clocks never matter.
var leaseScript = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local win = tonumber(ARGV[5])
local ttl = tonumber(ARGV[7])
local w = math.floor(now / win)
local left = win - (now % win)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('PEXPIRE', KEYS[2], ttl * 2)
local n = redis.call('ZCARD', KEYS[2])
local budget = tonumber(ARGV[3]) * win / 1000
if ARGV[4] == '0' then budget = budget * n end
local used = tonumber(redis.call('HGET', KEYS[1], w) or '0')
local want = tonumber(ARGV[1])
local need = tonumber(ARGV[2])
local rem = budget - used
local grant = 0
if rem >= need then
  grant = math.min(want, math.floor(rem))
  redis.call('HINCRBY', KEYS[1], w, grant)
end
local wait = 0
if grant == 0 and ARGV[8] == '1' and left <= tonumber(ARGV[9]) then
  local next = tonumber(redis.call('HGET', KEYS[1], w + 1) or '0')
  if budget - next >= need then
    redis.call('HINCRBY', KEYS[1], w + 1, need)
    wait = left
  end
end
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if tonumber(f) < w then redis.call('HDEL', KEYS[1], f) end
end
redis.call('PEXPIRE', KEYS[1], win * 3)
return {grant, left, n, math.floor(rem - grant), wait}
`)

// announceScript renews this instance's announcement on one flow
// (KEYS[1], the flow's instance set) and drops expired ones. ARGV: 1
// instance id, 2 TTL in ms. It returns the live instances.
var announceScript = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return redis.call('ZCARD', KEYS[1])
`)
