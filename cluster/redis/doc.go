// Package redis is a cluster.TokenService on Redis: the instances of a
// service share the budgets of their cluster flow rules through the Redis
// they already run, with no token server to deploy.
//
//	client := goredis.NewClient(&goredis.Options{Addr: "redis:6379"})
//	ts := redis.New(client)
//	defer ts.Close()
//	engine := core.NewEngine(core.WithTokenService(ts))
//
// Any go-redis v9 client works: a *goredis.Client, a failover (Sentinel)
// client, or a *goredis.ClusterClient for Redis Cluster. The service never
// closes the client.
//
// # Leases
//
// Asking Redis on every entry would cost a round trip per call. Instead
// an instance leases a small batch of tokens at a time with one atomic
// Lua script, spends them locally (an atomic decrement, no allocation),
// and asks for the next batch when they run out. The script reads Redis's
// clock (TIME), so the instances' clocks never matter; the budget is
// counted per window of ClusterConfig.WindowIntervalMs aligned to that
// clock; and a lease is only spent until its window ends (measured from
// when the request was sent, so never later than Redis's end of the
// window). Once Redis reports that a window's budget cannot cover an
// entry, the instance refuses such entries locally until the window ends,
// without asking again.
//
// A window's budget is the rule's count times the window in seconds; for
// ThresholdType 0 (average local) it is also multiplied by the number of
// live instances of the flow. Instances announce themselves in a sorted
// set with an expiry, renewed with every lease and every second; one that
// stops (crash, partition) stops counting within 3 seconds, one that
// closes its service at once.
//
// # Error bound
//
// Tokens are counted in Redis when they are leased, and a lease is spent
// only within its window, so the entries admitted in a window never exceed
// its budget. They can fall short of it: tokens leased but not spent when
// the window ends are lost, and while they are held another instance may
// be refused. An instance holds at most one batch, and a batch is 5% of
// the window's budget divided by the number of live instances of the flow
// (at least one token), so all instances together hold at most 5% of the
// budget: when the offered load exceeds the budget, each window admits
// between 95% and 100% of it (plus one token per instance when batches
// round up to one token). Measured with four instances, each offered
// twice its share of a global 200/s, every second admitted 197 to 202, on
// one Redis and on a Redis Cluster of three masters.
//
// The batch size is the price of this bound: an instance asks Redis about
// once per batch, so a global limit of 200/s shared by 4 instances (a
// batch of 2) costs about 500 script calls per 1,000 admitted entries, and
// one of 20,000/s (a batch of 250) about 4. The entry that takes a
// lease's last token asks for the next one without waiting for it, so the
// next entry usually finds tokens; an entry that finds none (the first of
// a window, or a burst faster than a round trip) waits for the request in
// progress (one per rule and instance at a time).
//
// # Keys
//
// A flow's keys are "<prefix>:{<flowId>}:tokens" (a hash of tokens leased
// per window, expiring after three windows) and
// "<prefix>:{<flowId>}:instances" (the announcements); the prefix is
// "bulwark:cluster" unless [WithKeyPrefix] says otherwise. The hash tag
// puts both in one Redis Cluster slot, so the script runs on one node.
//
// # When Redis fails
//
// An entry never waits for Redis longer than the timeout ([WithTimeout],
// default 5 ms): past it, or when Redis answers with an error, the entry
// gets cluster.Fail and the engine applies the rule's fallback, as Java
// does: the local check with the rule's count when
// FallbackToLocalWhenFail is set, otherwise a pass. Requests run on
// goroutines of the service, so a frozen Redis, whose answers go-redis
// waits for until its ReadTimeout, never holds an entry past the timeout.
// After a failure the service backs off: entries fall back at once,
// without asking Redis, for 50 ms, doubling with each further failure up
// to 500 ms; then the next entry that needs tokens asks again, so cluster
// checks resume within about half a second of Redis answering (measured:
// 2 to 7 ms after a 5 s pause ended, 6 to 64 ms after a killed Redis was
// started again). [TokenService.Health] says whether Redis is failing,
// since when and why; an engine's statistics, metrics and live page show
// it too.
//
// # Differences from Java's token server
//
// Java's server counts a sliding window of SampleCount buckets; here the
// window is fixed (SampleCount is accepted and not used), so a burst may
// straddle two windows. ClusterConfig's Strategy, ResourceTimeout,
// ResourceTimeoutStrategy, AcquireRefuseStrategy and ClientOfflineTime
// have no use without a token server and are ignored. A prioritized entry
// refused in the current window may take a token of the next one when
// that begins within 500 ms (Sentinel's default occupy timeout), and
// waits for it.
package redis
