//! Sessions: an id, an event log under `<workspace>/.agents/sessions/<id>/events.jsonl`, and
//! turns — model calls through the retry pipeline, tool calls, tool outputs budgeted before
//! they go back to the model — ending in one `result` event.
//!
//! A caller may attach a fallback (seed 004's degrade path): when the provider stays
//! unavailable after the retries, the fallback answers and the turn ends `degraded`, with its
//! cause, never as a plain success.

pub mod budget;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use crate::clock::Clock;
use crate::decide::decision::Outcome;
use crate::decide::policy::RetryPolicy;
use crate::provider::{Delta, FunctionCall, HttpProvider, InputItem, ModelOutput, ModelRequest, OutputMode, ToolSpec};
use crate::run::engine::{CallFailure, RetryEngine};
use crate::run::events::{degraded_event, result_event, Event, EventSink, JsonlEvents};
use crate::session::budget::{head_tail, DEFAULT_TOOL_OUTPUT_BYTES};

/// What every session of a workspace shares.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// Sessions live under `<workspace>/.agents/sessions/`.
    pub workspace: PathBuf,
    /// The model every turn asks.
    pub model: String,
    /// The provider the calls go to.
    pub provider: HttpProvider,
    /// How its calls retry.
    pub policy: RetryPolicy,
    /// The clock the calls sleep on.
    pub clock: Arc<dyn Clock>,
    /// Model calls per turn before the turn gives up.
    pub max_steps: u32,
    /// The tool-output budget in bytes (REQ-0003-001).
    pub tool_output_bytes: usize,
}

impl SessionConfig {
    /// Sessions under `workspace`, with the default model, policy and limits.
    pub fn new(workspace: &Path, provider: HttpProvider, clock: Arc<dyn Clock>) -> Self {
        SessionConfig {
            workspace: workspace.to_owned(),
            model: "gpt-squall".to_owned(),
            provider,
            policy: RetryPolicy::default(),
            clock,
            max_steps: 8,
            tool_output_bytes: DEFAULT_TOOL_OUTPUT_BYTES,
        }
    }

    /// `<workspace>/.agents/sessions`.
    pub fn sessions_dir(&self) -> PathBuf {
        self.workspace.join(".agents").join("sessions")
    }
}

/// A session id that cannot be a directory name under `.agents/sessions/`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid session id `{id}`: use letters, digits, `-`, `_`, `.`; no `..`, no path separators")]
pub struct BadSessionId {
    /// The id as given.
    pub id: String,
}

/// A session id that is safe as a directory name.
pub fn validate_session_id(id: &str) -> Result<(), BadSessionId> {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if id.is_empty() || id.len() > 128 || id.contains("..") || id.starts_with('.') || !id.chars().all(safe) {
        return Err(BadSessionId { id: id.to_owned() });
    }
    Ok(())
}

/// What a tool call returned.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// What the model reads back.
    pub output: String,
    /// End the turn now with this message to the user (the storm guard uses it).
    pub end_turn: Option<String>,
}

/// A tool call in progress.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// The tools a turn offers.
pub trait Toolbox: Send {
    /// The tools, as the model is told of them.
    fn specs(&self) -> Vec<ToolSpec>;
    /// Run `call`.
    fn call<'a>(&'a mut self, call: &'a FunctionCall) -> ToolFuture<'a>;
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    /// The model answered (`stop_reason = "end_turn"`).
    Answered(String),
    /// The provider stayed unavailable and the fallback answered (`stop_reason = "degraded"`).
    Degraded {
        /// The fallback's answer.
        text: String,
        /// Why the provider could not answer.
        cause: CallFailure,
    },
    /// The turn failed (`stop_reason = "error"`).
    Failed(TurnError),
}

/// Why a turn failed: the provider's final error, or the session's own limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnError {
    /// The failure's kind.
    pub error_type: String,
    /// What went wrong.
    pub message: String,
    /// Provider attempts made by the failing call (0 when the session itself gave up).
    pub attempts: u32,
}

impl From<&CallFailure> for TurnError {
    fn from(failure: &CallFailure) -> Self {
        TurnError {
            error_type: failure.error.error_type().to_owned(),
            message: failure.error.message.clone(),
            attempts: failure.attempts,
        }
    }
}

/// What a degraded turn answers when the provider stays unavailable (seed 004).
pub type Fallback = Arc<dyn Fn(&CallFailure) -> String + Send + Sync>;

/// One session: its turns, its events under its own directory.
pub struct Session {
    id: String,
    config: SessionConfig,
    events: Arc<dyn EventSink>,
    events_path: PathBuf,
    fallback: Option<Fallback>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.id).field("events_path", &self.events_path).finish_non_exhaustive()
    }
}

impl Session {
    /// Open (or reopen) a session: its directory and its event log.
    pub fn open(config: SessionConfig, id: &str, agent: &str) -> std::io::Result<Session> {
        validate_session_id(id).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let events_path = config.sessions_dir().join(id).join("events.jsonl");
        let events: Arc<dyn EventSink> = Arc::new(JsonlEvents::create(&events_path)?);
        events.emit(&Event::SessionStart { session_id: id.to_owned(), agent: agent.to_owned() });
        Ok(Session { id: id.to_owned(), config, events, events_path, fallback: None })
    }

    /// The same session, answering `fallback` when the provider stays unavailable.
    pub fn with_fallback(mut self, fallback: Fallback) -> Self {
        self.fallback = Some(fallback);
        self
    }

    /// Its id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Where its events are written.
    pub fn events_path(&self) -> &Path {
        &self.events_path
    }

    /// Its directory.
    pub fn dir(&self) -> PathBuf {
        self.config.sessions_dir().join(&self.id)
    }

    /// Its configuration.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Record `event` in its events.
    pub fn emit(&self, event: &Event) {
        self.events.emit(event);
    }

    /// One turn: call the model, run the tools it asks for, until it answers.
    pub async fn run_turn(
        &self,
        instructions: &str,
        prompt: &str,
        toolbox: &mut dyn Toolbox,
        mode: OutputMode,
        display: &(dyn Fn(Delta<'_>) + Send + Sync),
    ) -> TurnOutcome {
        self.emit(&Event::UserMessage { text: prompt.to_owned() });
        let mut input = vec![InputItem::User(prompt.to_owned())];
        for _ in 0..self.config.max_steps {
            let request = ModelRequest {
                model: self.config.model.clone(),
                instructions: Some(instructions.to_owned()),
                input: input.clone(),
                tools: toolbox.specs(),
                session_id: Some(self.id.clone()),
            };
            let output = match self.model_call(&request, mode, display).await {
                Ok(output) => output,
                Err(failure) => return self.end_failed(failure),
            };
            if output.function_calls.is_empty() {
                return self.end_answered(output.text);
            }
            for call in output.function_calls {
                self.emit(&Event::ToolCall {
                    call_id: call.call_id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                });
                let result = toolbox.call(&call).await;
                let output = head_tail(&result.output, self.config.tool_output_bytes).into_owned();
                self.emit(&Event::ToolResult {
                    call_id: call.call_id.clone(),
                    name: call.name.clone(),
                    output: output.clone(),
                });
                let call_id = call.call_id.clone();
                input.push(InputItem::FunctionCall(call));
                input.push(InputItem::FunctionOutput { call_id, output });
                if let Some(message) = result.end_turn {
                    return self.end_answered(message);
                }
            }
        }
        let message = format!("the turn used its {} model calls without an answer", self.config.max_steps);
        self.emit(&Event::RuntimeError {
            phase: "session",
            error_type: "SessionStepLimit".to_owned(),
            error_message: message.clone(),
            decision: None,
        });
        self.emit(&result_event("error", None));
        TurnOutcome::Failed(TurnError { error_type: "SessionStepLimit".to_owned(), message, attempts: 0 })
    }

    async fn model_call(
        &self,
        request: &ModelRequest,
        mode: OutputMode,
        display: &(dyn Fn(Delta<'_>) + Send + Sync),
    ) -> Result<ModelOutput, CallFailure> {
        let engine = RetryEngine::new(self.config.policy.clone(), self.config.clock.clone(), self.events.clone());
        let provider = &self.config.provider;
        engine.run(|context| provider.attempt(request, context, mode, display)).await
    }

    fn end_answered(&self, text: String) -> TurnOutcome {
        self.emit(&Event::AssistantMessage { text: text.clone() });
        self.emit(&result_event("end_turn", Some(&text)));
        TurnOutcome::Answered(text)
    }

    fn end_failed(&self, failure: CallFailure) -> TurnOutcome {
        let unavailable = matches!(
            failure.decision.outcome,
            Outcome::Exhausted | Outcome::TimeBudgetExhausted | Outcome::RetryAfterTooLong
        );
        match &self.fallback {
            Some(fallback) if unavailable => {
                let text = fallback(&failure);
                self.emit(&degraded_event(&text, failure.cause()));
                TurnOutcome::Degraded { text, cause: failure }
            }
            _ => {
                self.emit(&result_event("error", None));
                TurnOutcome::Failed(TurnError::from(&failure))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::validate_session_id;

    #[test]
    fn session_ids_cannot_escape_their_directory() {
        for bad in ["", "..", "../x", "a/b", "a\\b", ".hidden", "a b", "x..y"] {
            assert!(validate_session_id(bad).is_err(), "{bad:?} accepted");
        }
        assert!(validate_session_id("main-1.dr2_x").is_ok());
    }
}
