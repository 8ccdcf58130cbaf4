//! Carrying out the decisions: the retry engine that makes attempts and sleeps, the injected
//! clock it sleeps on, the events it records, and the model call it retries.

pub mod call;
pub mod clock;
pub mod engine;
pub mod events;
