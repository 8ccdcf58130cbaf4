//! Calls a test makes of a run without a [`crate::harness::Harness`]: a streamed call of every
//! API squall serves, a raw HTTP/1 request on a socket, a run scripted in TOML on a provider.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};

use serde_json::json;
use squall::embedded::{MockProvider, ScriptedRun};
use squall::scenario::load::from_toml_str;

/// A raw request for a run's Responses endpoint, with `extra` bytes after it.
pub fn raw_request(base_url: &str, addr: SocketAddr, extra: &[u8]) -> TcpStream {
    let path = base_url.split_once("/runs/").map(|(_, rest)| format!("/runs/{rest}/responses")).expect("a run URL");
    let body = r#"{"model":"m","input":"x","stream":true}"#;
    let mut socket = TcpStream::connect(addr).expect("connects");
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(head.as_bytes()).expect("writes");
    socket.write_all(extra).expect("writes");
    socket
}

/// A run of the scenario `toml` on `provider`.
pub fn run_of(provider: &MockProvider, toml: &str) -> ScriptedRun {
    provider.run(from_toml_str("test scenario", toml).expect("valid scenario"))
}

/// A streamed Responses request.
pub fn responses_request() -> serde_json::Value {
    json!({"model": "gpt-test", "input": "hello", "stream": true})
}

/// A streamed call of every API squall serves on `run`: (API, URL, body, what the complete
/// stream ends with).
pub fn every_api_call(run: &ScriptedRun) -> [(&'static str, String, serde_json::Value, &'static str); 6] {
    let root = run.bedrock_base_url().to_owned();
    let base = run.base_url().to_owned();
    let chat = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    [
        ("responses", format!("{base}/responses"), responses_request(), "response.completed"),
        ("chat", format!("{base}/chat/completions"), chat.clone(), "[DONE]"),
        (
            "messages",
            format!("{base}/messages"),
            json!({"model": "m", "max_tokens": 9, "stream": true, "messages": []}),
            "message_stop",
        ),
        ("gemini", format!("{root}/v1beta/models/m:streamGenerateContent?alt=sse"), json!({"contents": []}), "STOP"),
        ("bedrock", format!("{root}/model/m/converse-stream"), json!({"messages": []}), "messageStop"),
        ("ollama", format!("{root}/api/chat"), json!({"model": "m", "messages": []}), "\"done\":true"),
    ]
}
