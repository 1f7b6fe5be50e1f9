//! Integration tests of the engine, one module per topic (nexosim's layout): analytic cases,
//! PAUSE, PFC and buffer models, conservation, determinism, rate limiting.

mod analytic;
mod common;
mod config;
mod control;
mod determinism;
mod golden;
mod pacing;
mod pause;
mod pfc;
mod placement;
mod windows;
mod workloads;
