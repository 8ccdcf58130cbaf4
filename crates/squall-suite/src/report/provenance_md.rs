//! The provenance section of `acceptance.md`: squall's build, the implementation and what it
//! says of itself, the machine and its load, the features' digests, and the command that runs
//! each case alone.

use std::fmt::Write as _;

use super::cell;
use super::Report;

pub(super) fn render(out: &mut String, report: &Report) {
    let Some(p) = &report.provenance else {
        let _ = writeln!(out, "\n## Provenance\n\nNot recorded: the report was written before squall recorded it.");
        return;
    };
    let load =
        |load: Option<[f64; 3]>| load.map_or_else(|| "not measured".to_owned(), |[a, b, c]| format!("{a} / {b} / {c}"));
    let reported = p.implementation.reported.as_ref().map_or_else(
        || "nothing (`result.json` has no `implementation`)".to_owned(),
        |s| {
            let runtime = s.runtime.as_deref().map(|r| format!(" on {}", cell(r))).unwrap_or_default();
            format!("`{}` {}{runtime}", cell(&s.name), s.version.as_deref().unwrap_or("(no version)"))
        },
    );
    let _ = writeln!(out, "\n## Provenance\n\n| | |\n|---|---|");
    let _ = writeln!(
        out,
        "| squall | {} (commit {}; {}) |",
        p.squall.version,
        p.squall.commit.as_deref().unwrap_or("unknown: not built from a git checkout"),
        p.squall.rustc.as_deref().unwrap_or("compiler unknown")
    );
    let _ = writeln!(out, "| Implementation | `{}`; it says it is {reported} |", cell(&p.implementation.command));
    let _ = writeln!(out, "| Machine | {} {}, {} cores |", p.host.os, p.host.arch, p.host.cores);
    let _ = writeln!(
        out,
        "| Load (1, 5, 15 min) | at the start {}; at the end {} |",
        load(p.host.load_at_start),
        load(p.host.load_at_end)
    );
    let _ = writeln!(out, "| Calibration | {} |", cell(&report.calibration.summary));
    let _ = writeln!(out, "\n| Feature file | SHA-256 | Cases run |\n|---|---|---|");
    for feature in &p.features {
        let _ = writeln!(out, "| {} | `{}` | {} |", cell(&feature.file), feature.sha256, feature.cases);
    }
    let _ = writeln!(
        out,
        "\n<details><summary>Each case alone: its scenario's SHA-256 and the command that runs it</summary>\n"
    );
    let _ = writeln!(out, "| Case | Scenario SHA-256 | Command |\n|---|---|---|");
    for case in &p.cases {
        let digest = case.scenario_sha256.as_deref().unwrap_or("none played");
        let _ = writeln!(out, "| {} | `{digest}` | `{}` |", cell(&case.id), cell(&case.reproduce));
    }
    let _ = writeln!(out, "\n</details>");
}
