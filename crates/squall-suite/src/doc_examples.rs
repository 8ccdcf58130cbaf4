//! Test support: the JSON examples of the docs (`docs/*.md`), read, and the field paths of a
//! JSON value — so a test can hold a documented schema to the type that writes it.

use std::collections::BTreeSet;

use serde_json::Value;

/// Every ```json block of `markdown`, in order, with the `...` elisions taken out.
pub(crate) fn json_blocks(markdown: &str) -> Vec<Value> {
    let elided = regex::Regex::new(r"(,\s*\.\.\.)|\.\.\.").expect("regex");
    markdown
        .split("```json\n")
        .skip(1)
        .filter_map(|rest| rest.split("\n```").next())
        .map(|block| {
            serde_json::from_str(&elided.replace_all(block, ""))
                .unwrap_or_else(|e| panic!("a documented example is not JSON once `...` is taken out: {e}\n{block}"))
        })
        .collect()
}

/// Every field's path in `value` (`requirements[].cases[].verdict`), not descending into the
/// fields named in `opaque` (what others define: a journal, a scenario, an environment).
pub(crate) fn paths(value: &Value, opaque: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(value, "", opaque, &mut out);
    out
}

fn walk(value: &Value, at: &str, opaque: &[&str], out: &mut BTreeSet<String>) {
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                let path = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
                if !opaque.contains(&key.as_str()) {
                    walk(field, &path, opaque, out);
                }
                out.insert(path);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| walk(item, &format!("{at}[]"), opaque, out)),
        _ => {}
    }
}
