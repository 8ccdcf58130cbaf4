//! Carrying out the decisions: the retry engine that makes attempts and sleeps (on the injected
//! [`crate::clock`]), the events it records, and the model call it retries.

pub mod call;
pub mod engine;
pub mod events;
