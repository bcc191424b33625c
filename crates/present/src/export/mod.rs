//! What gpu-doctor hands to the systems a lab or a cluster already runs: the Prometheus /
//! OpenMetrics exposition ([`prom`]) for `serve` and for node_exporter's textfile collector
//! (`check --format prom`) and the bounded HTTP server behind `serve` ([`http`]).

pub mod http;
pub mod prom;
