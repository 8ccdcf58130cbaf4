//! Scenario errors that name the source, line/column, field path and bad value.

use std::fmt;

/// One step of a field path: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A field path such as `attempts[0].fault.after_events`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<PathSegment>);

impl FieldPath {
    /// The top level of a scenario.
    pub fn root() -> Self {
        FieldPath(Vec::new())
    }

    /// Whether this is the top level (no field).
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// This path followed by the key `key`.
    pub fn key(&self, key: &str) -> Self {
        let mut next = self.0.clone();
        next.push(PathSegment::Key(key.to_owned()));
        FieldPath(next)
    }

    /// This path followed by the array index `index`.
    pub fn index(&self, index: usize) -> Self {
        let mut next = self.0.clone();
        next.push(PathSegment::Index(index));
        FieldPath(next)
    }

    /// The path `serde_path_to_error` tracked while deserializing, segment by segment (no
    /// text to parse, so a key with dots or brackets in it stays one key).
    pub fn from_serde(path: &serde_path_to_error::Path) -> Self {
        use serde_path_to_error::Segment;
        let segments = path
            .iter()
            .filter_map(|segment| match segment {
                Segment::Seq { index } => Some(PathSegment::Index(*index)),
                Segment::Map { key } => Some(PathSegment::Key(key.clone())),
                Segment::Enum { variant } => Some(PathSegment::Key(variant.clone())),
                Segment::Unknown => None,
            })
            .collect();
        FieldPath(segments)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(top level)");
        }
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                // A key that is not a plain word (a header name with dots or brackets) is quoted,
                // so the path reads back unambiguously.
                PathSegment::Key(key) if !is_plain(key) => write!(f, "[{key:?}]")?,
                PathSegment::Key(key) if i == 0 => write!(f, "{key}")?,
                PathSegment::Key(key) => write!(f, ".{key}")?,
                PathSegment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

fn is_plain(key: &str) -> bool {
    !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A scenario that cannot be used, with everything a person needs to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    /// The file path, or `inline scenario` for admin API bodies.
    pub source_name: String,
    /// 1-based line and column when the source has positions.
    pub location: Option<(usize, usize)>,
    /// The field at fault.
    pub field: FieldPath,
    /// What is wrong with it, with the bad value and what would be valid.
    pub message: String,
}

impl ScenarioError {
    /// An error about `field`, not yet located in a source.
    pub fn new(field: FieldPath, message: impl Into<String>) -> Self {
        ScenarioError { source_name: String::new(), location: None, field, message: message.into() }
    }

    /// The same error, naming where the scenario came from.
    pub fn in_source(mut self, source_name: &str) -> Self {
        self.source_name = source_name.to_owned();
        self
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source_name)?;
        if let Some((line, column)) = self.location {
            write!(f, ":{line}:{column}")?;
        }
        if self.field.is_root() {
            // A file or a directory at fault, or the scenario as a whole: no field to name.
            return write!(f, ": {}", self.message);
        }
        write!(f, ": field `{}`: {}", self.field, self.message)
    }
}

/// 1-based line and column of a byte offset in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..text.floor_char_boundary_compat(offset)];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, index: usize) -> usize;
}

impl FloorCharBoundary for str {
    fn floor_char_boundary_compat(&self, mut index: usize) -> usize {
        while index > 0 && !self.is_char_boundary(index) {
            index -= 1;
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_read_like_the_source() {
        let path = FieldPath::root().key("tracks").index(1).key("attempts").index(0).key("fault").key("kind");
        assert_eq!(path.to_string(), "tracks[1].attempts[0].fault.kind");
        assert_eq!(FieldPath::root().key("a").index(2).to_string(), "a[2]");
        let odd = FieldPath::root().key("attempts").index(0).key("headers").key("x]y[.z");
        assert_eq!(odd.to_string(), r#"attempts[0].headers["x]y[.z"]"#);
    }

    #[test]
    fn line_column_counts_from_one() {
        assert_eq!(line_column("ab\ncd", 0), (1, 1));
        assert_eq!(line_column("ab\ncd", 4), (2, 2));
    }
}
