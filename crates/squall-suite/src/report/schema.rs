//! The report as a type: [`Report`] is `report.json`'s public schema (documented in
//! `docs/reports.md`; fields are added, never renamed). It is built once from a suite run
//! ([`Report::new`]); every format renders it, so a renamed field fails to compile instead of
//! rendering blank, and `report.json` reads back into it (for tools that merge or compare runs).

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::ReportMeta;
use crate::provenance::{shell_word, Build, CaseOrigin, Implementation, Provenance, SelfDescription};
use crate::results::{CaseRecord, ProfileResult, RequirementResult};
use crate::timing::reaction::ScaleSamples;
use crate::timing::{Calibration, Lockstep, ReactionMs};
use crate::waivers::WaiverRecord;
use crate::{Level, RunVerdict, SuiteOutcome, Tally};
use squall::clock::TimeScale;

/// Request bodies in the evidence are cut to this many bytes per string.
const EVIDENCE_STRING_BYTES: usize = 2048;

/// The schema `report.json` follows: fields are added, never renamed, within one.
pub const REPORT_SCHEMA: &str = "squall-report/1";

fn report_schema() -> String {
    REPORT_SCHEMA.to_owned()
}

fn scaled_clock() -> String {
    crate::iut::ClockMode::Scaled.as_str().to_owned()
}

/// `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// `squall-report/1` (reports written before it was recorded read as it).
    #[serde(default = "report_schema")]
    pub schema: String,
    /// Who was tested, and how.
    pub iut: IutInfo,
    /// The squall that judged it.
    pub squall_version: String,
    /// When the run began.
    pub started_at: Timestamp,
    /// How long the run took, in real ms.
    pub duration_ms: u64,
    /// The run's time scale (cases may run slower; each carries its own).
    pub time_scale: TimeScale,
    /// The most a case's time scale could be raised to for its timing checks.
    pub max_time_scale: TimeScale,
    /// The clock the implementation's processes ran on: `scaled` (real time, the client scaling
    /// its own waits) or `accelerated` (sped up by one over each case's time scale); reports
    /// written before it was recorded read as `scaled`.
    #[serde(default = "scaled_clock")]
    pub clock: String,
    /// Whether squall served the implementation over TLS (`squall run --tls`); absent when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
    /// Whether the implementation's processes were forked from one that imported its script's
    /// imports once (`squall run --warm`); absent when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warm: bool,
    /// How the implementation's own time per retry was measured.
    pub calibration: CalibrationReport,
    /// Real seconds each case had before the implementation was killed.
    pub case_timeout_s: f64,
    /// Cases run side by side.
    pub concurrency: usize,
    /// The run's verdict.
    pub verdict: RunVerdict,
    /// The profiles judged, and the others.
    pub profiles: Profiles,
    /// The tag expression the cases were filtered by, if any.
    pub tags: Option<String>,
    /// The requirements by verdict.
    pub summary: Tally,
    /// The cases by verdict.
    pub case_summary: Tally,
    /// Every requirement judged, with its cases.
    pub requirements: Vec<RequirementResult>,
    /// Where the verdicts came from: squall's build, the features' digests, the implementation's
    /// own account, the machine, each case's scenario digest and command (absent from reports
    /// written before it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// The waivers given, each with what became of it (absent when none were given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waivers: Vec<WaiverRecord>,
}

/// The implementation under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IutInfo {
    /// A short name (`reference`, `python-openai`).
    pub name: String,
    /// The command that ran it, or `reference (in-process)`.
    pub command: String,
    /// The `--iut` value that repeats the run.
    pub run_as: String,
    /// The IUT contract level it was judged at.
    pub level: Level,
}

/// A moment, written as RFC 3339 in UTC to the second (`2026-11-21T20:21:53Z`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp(pub SystemTime);

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        humantime::format_rfc3339_seconds(self.0).fmt(f)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        humantime::parse_rfc3339(&text)
            .map(Timestamp)
            .map_err(|e| serde::de::Error::custom(format!("`{text}` is not an RFC 3339 time: {e}")))
    }
}

/// The calibration, as reports show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationReport {
    /// One line for people.
    pub summary: String,
    /// The reaction taken out of every wait, and its spread.
    pub reaction_ms: ReactionMs,
    /// Retries measured.
    pub samples: usize,
    /// Policy ms per retry the client waited where it was asked for 1 ms.
    pub unasked_wait_ms: Vec<f64>,
    /// Real ms per retry it waited where asked for 1 ms at every scale: a backoff it does not
    /// scale (absent when there is none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unscaled_wait_ms: Vec<f64>,
    /// Why nothing was measured, when nothing was.
    pub missing: Option<String>,
    /// The raw gaps, per instance, at each of the two scales.
    pub scales: Vec<ScaleSamples>,
    /// Instances run at each scale.
    pub instances: usize,
    /// Real ms the calibration took.
    pub duration_ms: f64,
    /// How far a lockstep herd spread, when herd cases ran (absent in reports of no herd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lockstep: Option<Lockstep>,
    /// The sped-up clock the implementation's processes ran on (absent when they ran in real
    /// time): `accelerated (squall-clock 2)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
}

impl From<&Calibration> for CalibrationReport {
    fn from(calibration: &Calibration) -> CalibrationReport {
        let r = &calibration.reaction;
        CalibrationReport {
            summary: calibration.summary(),
            reaction_ms: r.into(),
            samples: r.samples,
            unasked_wait_ms: r.unasked_wait_ms.clone(),
            unscaled_wait_ms: r.unscaled_wait_ms.clone(),
            missing: r.missing.clone(),
            scales: calibration.samples.to_vec(),
            instances: calibration.instances,
            duration_ms: calibration.duration_ms,
            lockstep: calibration.lockstep.clone(),
            clock: calibration.clock.clone(),
        }
    }
}

/// The profiles judged and those that were not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profiles {
    /// Judged, each with its requirements' verdicts.
    pub judged: Vec<ProfileResult>,
    /// Known to squall but not selected.
    pub not_judged: Vec<ProfileName>,
}

/// A profile by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileName {
    /// `prd-0003`, ...
    pub id: String,
    /// The seed document it comes from.
    pub title: String,
}

impl Report {
    /// The report of `outcome`, with request bodies in the evidence cut to 2 KiB per string.
    pub fn new(meta: &ReportMeta, outcome: &SuiteOutcome) -> Report {
        let mut requirements = outcome.requirements.clone();
        requirements.iter_mut().flat_map(|r| r.cases.iter_mut()).for_each(cut_evidence);
        Report {
            schema: report_schema(),
            iut: IutInfo {
                name: meta.name.clone(),
                command: meta.command.clone(),
                run_as: meta.run_as.clone(),
                level: meta.level,
            },
            squall_version: env!("CARGO_PKG_VERSION").to_owned(),
            started_at: Timestamp(outcome.started_at),
            duration_ms: outcome.duration.as_millis() as u64,
            time_scale: meta.time_scale,
            max_time_scale: meta.max_time_scale,
            clock: outcome.clock.as_str().to_owned(),
            tls: outcome.tls,
            warm: outcome.warm,
            calibration: (&outcome.calibration).into(),
            case_timeout_s: meta.case_timeout.as_secs_f64(),
            concurrency: meta.concurrency,
            verdict: outcome.verdict(),
            profiles: Profiles {
                judged: outcome.profiles.clone(),
                not_judged: outcome
                    .selection
                    .others()
                    .iter()
                    .map(|p| ProfileName { id: p.id.to_owned(), title: p.title.to_owned() })
                    .collect(),
            },
            tags: outcome.tags.clone(),
            summary: outcome.requirements_tally(),
            case_summary: outcome.cases_tally(),
            requirements,
            provenance: Some(provenance(meta, outcome)),
            waivers: outcome.waivers.clone(),
        }
    }

    /// Every case of every requirement (a case tagged with two requirements appears twice).
    pub fn cases(&self) -> impl Iterator<Item = &CaseRecord> {
        self.requirements.iter().flat_map(|r| r.cases.iter())
    }

    /// The requirements of the judged profile `profile`.
    pub fn requirements_of<'a>(&'a self, profile: &'a ProfileResult) -> impl Iterator<Item = &'a RequirementResult> {
        self.requirements.iter().filter(move |r| r.profile == profile.id)
    }

    /// How long the run took.
    pub fn duration(&self) -> Duration {
        Duration::from_millis(self.duration_ms)
    }
}

/// The run's provenance: what `outcome` read and ran, as `meta` ran it.
fn provenance(meta: &ReportMeta, outcome: &SuiteOutcome) -> Provenance {
    let profiles = outcome.selection.profiles().iter().map(|p| p.id).collect::<Vec<_>>().join(",");
    // An outside implementation's clock is part of how it ran (the reference shares squall's).
    let in_process = matches!(
        crate::settings::parse_iut(&meta.run_as, crate::settings::Source::Flags),
        Ok(crate::iut::Iut::Reference { .. })
    );
    let mut clock = if in_process { String::new() } else { format!(" --clock {}", outcome.clock.as_str()) };
    if outcome.tls {
        clock.push_str(" --tls");
    }
    if outcome.warm {
        clock.push_str(" --warm");
    }
    let reproduce = |id: &str| {
        format!(
            "squall run --iut {} --level {}{clock} --profile {profiles} --case {}",
            shell_word(&meta.run_as),
            meta.level.as_str(),
            shell_word(id)
        )
    };
    Provenance {
        squall: Build::this(),
        features: outcome.features.clone(),
        implementation: Implementation {
            command: meta.command.clone(),
            reported: outcome.cases.iter().find_map(|c| SelfDescription::of(c.evidence.outputs.result.as_ref()?)),
        },
        host: outcome.host.clone(),
        cases: outcome
            .cases
            .iter()
            .filter(|c| !c.id.is_empty())
            .map(|c| CaseOrigin {
                id: c.id.clone(),
                scenario_sha256: c.scenario_sha256.clone(),
                reproduce: reproduce(&c.id),
            })
            .collect(),
    }
}

/// Long strings in a case's journal bodies keep their head and tail, so a report stays readable.
fn cut_evidence(case: &mut CaseRecord) {
    for entry in &mut case.evidence.journal {
        cut_long_strings(&mut entry.body, EVIDENCE_STRING_BYTES);
    }
}

/// Every string in `value` longer than `max` bytes keeps its head and tail around a note of
/// how much was left out.
fn cut_long_strings(value: &mut Value, max: usize) {
    match value {
        Value::String(text) if text.len() > max => {
            let head = floor_boundary(text, max / 2);
            let tail = ceil_boundary(text, text.len() - max / 2);
            *text = format!("{}…[{} bytes left out of the report]…{}", &text[..head], tail - head, &text[tail..]);
        }
        Value::Array(items) => items.iter_mut().for_each(|item| cut_long_strings(item, max)),
        Value::Object(fields) => fields.values_mut().for_each(|item| cut_long_strings(item, max)),
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
    use std::time::{Duration, SystemTime};

    use super::{cut_long_strings, Report, Timestamp};
    use crate::provenance::{FeatureDigest, Host};
    use crate::report::ReportMeta;
    use crate::requirements::ProfileSelection;
    use crate::results::{by_profile, by_requirement, CaseRecord, CheckRecord, ClientOutputs, Evidence};
    use crate::timing::{Calibration, Lockstep, Reaction};
    use crate::waivers::{Waiver, WaiverRecord, WaiverStatus};
    use crate::{Level, Strength, SuiteOutcome, Verdict};
    use serde_json::json;
    use squall::clock::TimeScale;

    /// A run of one case with one failed check, every optional field filled.
    fn report() -> Report {
        let case = CaseRecord {
            id: "req-0006-001/status-503-is-retried".into(),
            clauses: vec![crate::clauses::Clause::new(
                "000",
                54,
                "单测：模拟 provider 第一次 5xx，第二次成功，最终成功。",
            )
            .expect("a seed")],
            scenario_sha256: Some("ab".repeat(32)),
            name: "Status 503 is retried".into(),
            feature: "REQ-0006-001 Generic provider retry".into(),
            requirements: vec!["REQ-0006-001".into()],
            tags: vec!["REQ-0006-001".into(), "wire".into()],
            verdict: Verdict::Fail,
            inconclusive: Some("why it could not decide".into()),
            checks: vec![CheckRecord {
                name: "the server sees exactly 2 attempts".into(),
                level: Level::Wire,
                strength: Strength::Must,
                verdict: Verdict::Fail,
                expected: "2 attempts".into(),
                observed: "1 attempts".into(),
                draws: Some(crate::results::Draws { runs: 3, seeds: vec![7, 10_007, 20_007] }),
            }],
            error: Some("why".into()),
            time_scale: Some(TimeScale::of(0.01)),
            time_scale_note: Some("raised".into()),
            reaction_ms: Some((&Reaction::exactly(3.0)).into()),
            machine_allowance_ms: Some(25.0),
            lockstep_ms: Some(12.5),
            evidence: Evidence {
                outputs: ClientOutputs {
                    result: Some(
                        json!({"ok": false, "implementation": {"name": "acme-sdk", "version": "1.0.0", "runtime": "CPython 3.12.3"}}),
                    ),
                    exit_code: Some(0),
                    ..Default::default()
                },
                duration_ms: Some(4.0),
                ..Evidence::default()
            },
        };
        let cases = vec![case];
        let requirements = by_requirement(&cases);
        let selection = ProfileSelection::default();
        let outcome = SuiteOutcome {
            profiles: by_profile(&selection, &requirements),
            requirements,
            cases,
            selection,
            tags: Some("@wire".into()),
            clock: crate::iut::ClockMode::Scaled,
            tls: true,
            warm: true,
            calibration: Calibration {
                lockstep: Some(Lockstep::exact()),
                ..Calibration::assumed(Reaction { unscaled_wait_ms: vec![500.0], ..Reaction::exactly(3.0) })
            },
            started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000),
            duration: Duration::from_millis(1234),
            features: vec![FeatureDigest { file: "REQ-0006-001.feature".into(), sha256: "cd".repeat(32), cases: 1 }],
            waivers: vec![WaiverRecord {
                waiver: Waiver {
                    id: "req-0006-001/status-503-is-retried".into(),
                    reason: "known".into(),
                    owner: "qa".into(),
                    expires: "2099-01-01".into(),
                },
                status: WaiverStatus::Unused,
                waived: vec![],
            }],
            host: Host { load_at_start: Some([0.5, 0.4, 0.3]), load_at_end: Some([0.6, 0.4, 0.3]), ..Host::now() },
        };
        let meta = ReportMeta {
            name: "reference".into(),
            command: "reference (in-process)".into(),
            run_as: "reference".into(),
            level: Level::Tasks,
            time_scale: TimeScale::of(0.01),
            max_time_scale: TimeScale::REAL,
            case_timeout: Duration::from_secs(60),
            concurrency: 8,
        };
        Report::new(&meta, &outcome)
    }

    #[test]
    fn the_documented_schema_names_exactly_the_fields_of_the_report_type() {
        // Not inside what the implementation or the server wrote (documented in server.md and
        // the IUT contract).
        let opaque = ["journal", "events", "result"];
        let example = crate::doc_examples::json_blocks(include_str!("../../../../docs/reports.md")).remove(0);
        let documented = crate::doc_examples::paths(&example, &opaque);
        let actual = crate::doc_examples::paths(&serde_json::to_value(report()).expect("serializes"), &opaque);
        let undocumented: Vec<&String> = actual.difference(&documented).collect();
        let gone: Vec<&String> = documented.difference(&actual).collect();
        assert!(undocumented.is_empty(), "report.json fields missing from docs/reports.md: {undocumented:?}");
        assert!(gone.is_empty(), "docs/reports.md names fields report.json does not have: {gone:?}");
    }

    #[test]
    fn a_report_reads_back_as_it_was_written() {
        let report = report();
        let text = serde_json::to_string_pretty(&report).expect("serializes");
        let read: Report = serde_json::from_str(&text).expect("reads back");
        assert_eq!(read, report);
        assert_eq!(read.started_at.to_string(), "2026-11-18T11:06:40Z");
    }

    #[test]
    fn long_strings_keep_head_and_tail_on_character_boundaries() {
        let mut value = json!({"input": [{"text": format!("BEGIN{}END", "é".repeat(5000))}], "n": 1});
        cut_long_strings(&mut value, 100);
        let text = value["input"][0]["text"].as_str().expect("a string");
        assert!(text.starts_with("BEGIN") && text.ends_with("END") && text.contains("bytes left out"), "{text}");
        assert!(text.len() < 200, "{}", text.len());
        assert_eq!(value["n"], 1);
    }

    #[test]
    fn timestamps_are_rfc_3339_both_ways_and_a_bad_one_names_itself() {
        let stamp: Timestamp = serde_json::from_value(json!("2026-11-21T20:21:53Z")).expect("parses");
        assert_eq!(serde_json::to_value(stamp).expect("serializes"), json!("2026-11-21T20:21:53Z"));
        let bad = serde_json::from_value::<Timestamp>(json!("yesterday")).expect_err("not a time");
        assert!(bad.to_string().contains("`yesterday`"), "{bad}");
    }
}
