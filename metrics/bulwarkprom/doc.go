// Package bulwarkprom exports an engine's statistics, breaker states, rule
// changes, datasource health and token service health as Prometheus
// metrics.
//
// [NewCollector] returns a prometheus.Collector that the caller registers on
// a registry of their own; the package registers nothing globally and
// serves nothing. Every scrape reads [core.Engine.Stats] once; its totals
// count from the engine's making, so the counters cover the traffic before
// the collector was made or first scraped, as counters since the process
// started should.
//
// # Metrics
//
// Their names are a contract: dashboards and alerts are built on them.
//
//	bulwark_passed_total{resource}                    counter: entries admitted
//	bulwark_blocked_total{resource,kind}              counter: entries blocked, by kind of rule
//	                                                  (flow, degrade, system, authority, paramFlow:
//	                                                  the sections of a rule-set document)
//	bulwark_shadow_blocked_total{resource,kind}       counter: entries that shadow rules ("shadow": true)
//	                                                  would have blocked and let through, by kind of rule
//	bulwark_errors_total{resource}                    counter: entries completed with an error
//	bulwark_response_time_seconds{resource}           summary of completed entries' response times:
//	                                                  _count and _sum, no quantiles (the mean is
//	                                                  rate(_sum) / rate(_count)); each response time is
//	                                                  capped by core.WithMaxRT and counted in whole ms
//	bulwark_concurrency{resource}                     gauge: entries in flight
//	bulwark_circuit_breaker_state{resource,state}     gauge: per state (CLOSED, OPEN, HALF_OPEN), how
//	                                                  many of the resource's breakers are in it (1 for
//	                                                  the current state of a single breaker, 0 else)
//	bulwark_circuit_breaker_transitions_total{resource,from,to}  counter
//	bulwark_rules{kind}                               gauge: rules in force
//	bulwark_rule_changes_total{kind,result}           counter: result is applied or rejected
//	bulwark_datasource_up{datasource}                 gauge: 1 when the last attempt succeeded
//	bulwark_datasource_failures_total{datasource}     counter: failed reads and rejected documents
//	bulwark_datasource_last_applied_timestamp_seconds{datasource}  gauge (absent before the first)
//	bulwark_system_load1                              gauge (absent when no system rule needs it)
//	bulwark_system_cpu_usage_ratio                    gauge, 0 to 1 (likewise)
//	bulwark_system_inbound_qps                        gauge: inbound entries admitted, last second
//	bulwark_cluster_up                                gauge: 1 when the token service's backend answers,
//	                                                  0 while it fails and cluster rules fall back
//	bulwark_cluster_requests_total                    counter: requests the token service sent to its
//	                                                  backend (cluster/redis: leases asked of Redis)
//	bulwark_cluster_fallbacks_total                   counter: entries of cluster rules the service could
//	                                                  not answer in time (their rule's fallback applied)
//
// The bulwark_cluster_ metrics are there when the engine has a token service
// that reports its health (core.Stats.Cluster; cluster/redis's does).
//
// Label cardinality is bounded by the engine's resource bound
// (core.WithMaxResources). Datasources are exported when given with
// [WithDatasources]; their label is their Status().Name (datasource.WithName).
//
// examples/grafana/bulwark-dashboard.json is a Grafana dashboard of these metrics.
package bulwarkprom
