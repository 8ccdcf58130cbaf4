//! The model APIs squall speaks, by name: the bottom of the library, below the wire (what each
//! API sends for a reply: `crate::wire::reply`), the server (which path speaks which), the
//! journal (what a request spoke) and a run's base URLs ([`crate::embedded::ScriptedRun::url`]).

use serde::{Deserialize, Serialize};

/// Which model API a request speaks. Written as its name (`responses`, `chat`, `messages`,
/// `gemini`, `ollama_chat`, `ollama_generate`, `bedrock`, `bedrock_invoke`) in the journal and everywhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// `POST /responses`.
    Responses,
    /// `POST /chat/completions`.
    Chat,
    /// `POST /messages` (Anthropic's `/v1/messages`).
    Messages,
    /// `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent` (Google's
    /// Gemini API).
    Gemini,
    /// `POST /api/chat` (Ollama's native chat API).
    #[serde(rename = "ollama_chat")]
    OllamaChat,
    /// `POST /api/generate` (Ollama's native completion API).
    #[serde(rename = "ollama_generate")]
    OllamaGenerate,
    /// `POST /model/{modelId}/converse` and `/converse-stream` (Amazon Bedrock Runtime's
    /// Converse API).
    Bedrock,
    /// `POST /model/{modelId}/invoke` and `/invoke-with-response-stream` (Bedrock's InvokeModel,
    /// with Anthropic's Messages bodies: what the Anthropic SDKs' Bedrock clients call).
    #[serde(rename = "bedrock_invoke")]
    BedrockInvoke,
}

impl Api {
    /// Every API, in the order scenarios are validated and reported.
    pub const ALL: [Api; 8] = [
        Api::Responses,
        Api::Chat,
        Api::Messages,
        Api::Gemini,
        Api::OllamaChat,
        Api::OllamaGenerate,
        Api::Bedrock,
        Api::BedrockInvoke,
    ];

    /// The API's name in the journal and in messages: `responses`, `chat`, `messages`.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::Responses => "responses",
            Api::Chat => "chat",
            Api::Messages => "messages",
            Api::Gemini => "gemini",
            Api::OllamaChat => "ollama_chat",
            Api::OllamaGenerate => "ollama_generate",
            Api::Bedrock => "bedrock",
            Api::BedrockInvoke => "bedrock_invoke",
        }
    }

    /// The API's name for people: `Responses API`, ...
    pub fn title(self) -> &'static str {
        match self {
            Api::Responses => "Responses API",
            Api::Chat => "Chat Completions API",
            Api::Messages => "Messages API",
            Api::Gemini => "Gemini API",
            Api::OllamaChat => "Ollama chat API",
            Api::OllamaGenerate => "Ollama generate API",
            Api::Bedrock => "Bedrock Converse API",
            Api::BedrockInvoke => "Bedrock InvokeModel API",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Api;

    #[test]
    fn an_api_is_written_as_its_name() {
        for api in Api::ALL {
            assert_eq!(serde_json::to_value(api).expect("serializes"), api.as_str());
            assert_eq!(serde_json::from_value::<Api>(api.as_str().into()).expect("reads back"), api);
        }
    }
}
