//! Tool-output budget (REQ-0003-001): long strings are cut head + tail around a marker that
//! says how much was left out, before they enter the provider input. The cut never copies the
//! omitted middle, so a 50 MB tool output costs the size of the budget, not of the output.

use std::borrow::Cow;

use serde_json::Value;

/// The default budget for one tool output, in bytes.
pub const DEFAULT_TOOL_OUTPUT_BYTES: usize = 16 * 1024;

/// Cut `text` to at most `max_bytes` (plus the marker), keeping its head and its tail.
pub fn head_tail(text: &str, max_bytes: usize) -> Cow<'_, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let head_end = floor_boundary(text, max_bytes / 2);
    let tail_start = ceil_boundary(text, text.len() - (max_bytes - max_bytes / 2));
    let omitted = tail_start - head_end;
    Cow::Owned(format!(
        "{}\n…[{omitted} bytes omitted of {} by the tool-output budget: head and tail kept]…\n{}",
        &text[..head_end],
        text.len(),
        &text[tail_start..]
    ))
}

/// Apply the budget to every string inside a JSON value, in place.
pub fn budget_value(value: &mut Value, max_bytes: usize) {
    match value {
        Value::String(text) => {
            if let Cow::Owned(cut) = head_tail(text, max_bytes) {
                *text = cut;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| budget_value(item, max_bytes)),
        Value::Object(fields) => fields.values_mut().for_each(|item| budget_value(item, max_bytes)),
        _ => {}
    }
}

fn floor_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert!(matches!(head_tail("short", 100), Cow::Borrowed("short")));
    }

    #[test]
    fn long_text_keeps_head_and_tail_and_names_the_omission() {
        let text = format!("HEAD{}TAIL", "x".repeat(1000));
        let cut = head_tail(&text, 100);
        assert!(cut.starts_with("HEAD") && cut.ends_with("TAIL"), "{cut}");
        assert!(cut.contains("908 bytes omitted of 1008"), "{cut}");
    }

    #[test]
    fn a_50_mb_output_becomes_a_bounded_input() {
        let huge = "结果".repeat(50 * 1024 * 1024 / 6);
        let cut = head_tail(&huge, DEFAULT_TOOL_OUTPUT_BYTES);
        assert!(cut.len() < DEFAULT_TOOL_OUTPUT_BYTES + 200, "{} bytes", cut.len());
        assert!(cut.starts_with("结果") && cut.ends_with("结果"));
    }

    #[test]
    fn strings_inside_json_are_budgeted() {
        let mut value = serde_json::json!({"stdout": "a".repeat(500), "code": 0, "lines": ["b".repeat(500)]});
        budget_value(&mut value, 50);
        assert!(value["stdout"].as_str().is_some_and(|s| s.len() < 200 && s.contains("omitted")));
        assert!(value["lines"][0].as_str().is_some_and(|s| s.contains("omitted")));
        assert_eq!(value["code"], 0);
    }
}
