#![doc = include_str!("../README.md")]

pub mod cli;
pub mod commands;
pub mod config;
pub mod dashboard;
pub mod demo;
pub mod http;
pub mod onboarding;
mod output;
pub mod state;
pub mod system;
pub mod telemetry;
pub mod webhook_config;
pub mod worker;
