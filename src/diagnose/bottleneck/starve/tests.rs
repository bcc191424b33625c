//! Tests of the CPU feed-chain rules.
