//! Cutting scripted text into the deltas a stream sends, and scripted tool-call arguments
//! into the object the APIs that send them parsed (Messages, Gemini) carry.

use serde_json::{json, Value};

/// Split `text` into `chunks` near-equal pieces (on character boundaries), or by default one
/// piece per word with its leading whitespace, the way token streams look.
pub(super) fn deltas(text: &str, chunks: Option<u32>) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    match chunks {
        Some(n) => equal_pieces(text, n.max(1) as usize),
        None => words(text),
    }
}

/// A tool call's arguments as an object; text that is not a JSON object is kept under `input`
/// as a string, so a deliberately malformed call stays visible.
pub(super) fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(object @ Value::Object(_)) => object,
        _ => json!({"input": arguments}),
    }
}

/// A reply with all three kinds of output: reasoning "plan it", text "a b", a call of `Task`
/// with `{"n":1}` (the wire modules' tests).
#[cfg(test)]
pub(super) fn rich_spec() -> crate::scenario_model::StreamSpec {
    crate::scenario_model::StreamSpec {
        reasoning: Some("plan it".into()),
        text: Some("a b".into()),
        function_call: Some(crate::scenario_model::FunctionCallSpec {
            name: "Task".into(),
            arguments: r#"{"n":1}"#.into(),
            call_id: None,
        }),
        ..crate::scenario_model::StreamSpec::default()
    }
}

fn equal_pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let n = n.min(chars.len());
    let base = chars.len() / n;
    let extra = chars.len() % n;
    let mut pieces = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let len = base + usize::from(i < extra);
        pieces.push(chars[start..start + len].iter().collect());
        start += len;
    }
    pieces
}

fn words(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    for c in text.chars() {
        if c.is_whitespace() && in_word {
            pieces.push(std::mem::take(&mut current));
            in_word = false;
        }
        if !c.is_whitespace() {
            in_word = true;
        }
        current.push(c);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_pieces_rejoin_to_the_text() {
        let pieces = deltas("The quick brown fox", Some(6));
        assert_eq!(pieces.len(), 6);
        assert_eq!(pieces.concat(), "The quick brown fox");
    }

    #[test]
    fn default_is_one_piece_per_word() {
        assert_eq!(deltas("The quick fox", None), vec!["The", " quick", " fox"]);
    }

    #[test]
    fn more_chunks_than_characters_gives_one_per_character() {
        assert_eq!(deltas("ab", Some(9)), vec!["a", "b"]);
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        assert_eq!(deltas("失败原因", Some(2)), vec!["失败", "原因"]);
    }
}
