//! One path from what a user asked for to a [`SuiteConfig`]: `squall run`'s flags and, for
//! `cargo test --test conformance`, the environment both fill a [`SuiteSettings`], and
//! [`SuiteSettings::resolve`] applies the one set of defaults and validates every value, with
//! an error that names the flag or the variable at fault.

use std::path::PathBuf;
use std::time::Duration;

use super::cases::Shard;
use super::features::{features_dir, FeaturesDir};
use super::requirements::{ProfileSelection, UnknownProfile};
use super::runner::SuiteConfig;
use super::verdict::Level;
use crate::iut::{ClockMode, Iut};
use squall::clock::TimeScale;
use squall::scenario::{Catalogue, ScenarioError};

/// Production values run at this fraction of real time.
pub const DEFAULT_TIME_SCALE: TimeScale = TimeScale::of(0.01);
/// The most a case's time scale may be raised to for its timing checks.
pub const DEFAULT_MAX_TIME_SCALE: TimeScale = TimeScale::REAL;
/// Real seconds an implementation gets per case.
pub const DEFAULT_CASE_TIMEOUT_S: f64 = 60.0;
/// Cases run side by side.
pub const DEFAULT_CONCURRENCY: usize = 8;
/// Instances of the implementation a herd case runs at once. The herd verdict on lockstep
/// retries is derived for herds of 10 or more (see `docs/requirements.md`, "Herds").
pub const DEFAULT_HERD: u32 = 10;
/// The fewest and the most instances a herd may have.
pub const HERD_SIZES: std::ops::RangeInclusive<u32> = 10..=500;

// The defaults live here, with the flags and variables that override them.
impl SuiteConfig {
    /// The defaults (this module's): level `tasks`, time scale 1/100 (raised as far as real
    /// time where a timing check needs it), profile `prd-0006`, 8 cases at once, 60 s per case.
    pub fn new(iut: Iut, features: PathBuf, catalogue: Catalogue) -> Self {
        SuiteConfig {
            iut,
            level: Level::Tasks,
            clock: ClockMode::Scaled,
            warm: false,
            time_scale: DEFAULT_TIME_SCALE,
            max_time_scale: DEFAULT_MAX_TIME_SCALE,
            features,
            catalogue,
            profiles: ProfileSelection::default(),
            tags: None,
            concurrency: DEFAULT_CONCURRENCY,
            case_timeout: Duration::from_secs_f64(DEFAULT_CASE_TIMEOUT_S),
            seed: None,
            herd: DEFAULT_HERD,
            tls: false,
            shard: None,
            cases: Vec::new(),
            console: false,
            cucumber_json: None,
            progress: None,
        }
    }
}

/// Where the settings came from, so that an error names what the user typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `squall run --flag value`.
    Flags,
    /// `SQUALL_VARIABLE=value cargo test --test conformance`.
    Environment,
}

/// The settings a suite run can be given; `None` takes the default.
#[derive(Debug, Clone)]
pub struct SuiteSettings {
    /// Where they came from.
    pub source: Source,
    /// `reference`, `reference:<mutant>`, or a command (default: `reference`).
    pub iut: Option<String>,
    /// `wire`, `events` or `tasks` (default: `tasks` for the reference, `events` for a command).
    pub level: Option<String>,
    /// The profiles to judge (default: `prd-0006`).
    pub profiles: Vec<String>,
    /// A tag expression.
    pub tags: Option<String>,
    /// `scaled` or `accelerated` (default: `scaled`).
    pub clock: Option<String>,
    /// See [`DEFAULT_TIME_SCALE`].
    pub time_scale: Option<TimeScale>,
    /// See [`DEFAULT_MAX_TIME_SCALE`].
    pub max_time_scale: Option<TimeScale>,
    /// See [`DEFAULT_CASE_TIMEOUT_S`].
    pub case_timeout_s: Option<f64>,
    /// See [`DEFAULT_CONCURRENCY`].
    pub concurrency: Option<usize>,
    /// The jitter seed passed to the implementation as `SQUALL_SEED`.
    pub seed: Option<u64>,
    /// See [`DEFAULT_HERD`].
    pub herd: Option<u32>,
    /// Serve the implementation over TLS (default: plain HTTP).
    pub tls: bool,
    /// Start a Python implementation warm (default: a fresh process for every case).
    pub warm: bool,
    /// The features directory (default: `./features` if present, else the built-in ones).
    pub features: Option<PathBuf>,
    /// The scenario catalogue (default: `./scenarios` if present, else the built-in one).
    pub scenarios: Option<PathBuf>,
    /// Only the K-th of N parts of the cases (`K/N`; default: every case).
    pub shard: Option<String>,
    /// Only the cases with these ids (default: every case).
    pub cases: Vec<String>,
    /// Old names that were used, each with what replaces it (the caller shows them).
    pub deprecations: Vec<String>,
}

/// A setting that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A value out of range or of the wrong kind: `SQUALL_TIME_SCALE=0: expected a number in (0, 100]`.
    #[error("{setting}: expected {expected}")]
    Invalid {
        /// The flag or variable with the value given (`--level fast`, `SQUALL_LEVEL=fast`).
        setting: String,
        /// What it takes.
        expected: String,
    },
    /// The scenario catalogue does not load.
    #[error(transparent)]
    Scenarios(#[from] ScenarioError),
    /// The features directory cannot be used.
    #[error(transparent)]
    Features(crate::SuiteError),
}

/// A resolved configuration and the features directory it reads (kept alive while it runs).
#[derive(Debug)]
pub struct Resolved {
    /// The suite's configuration.
    pub config: SuiteConfig,
    /// Where its features are.
    pub features: FeaturesDir,
}

impl SuiteSettings {
    /// Nothing asked for: every default.
    pub fn new(source: Source) -> SuiteSettings {
        SuiteSettings {
            source,
            iut: None,
            level: None,
            profiles: Vec::new(),
            tags: None,
            clock: None,
            time_scale: None,
            max_time_scale: None,
            case_timeout_s: None,
            concurrency: None,
            seed: None,
            herd: None,
            tls: false,
            warm: false,
            features: None,
            scenarios: None,
            shard: None,
            cases: Vec::new(),
            deprecations: Vec::new(),
        }
    }

    /// The settings of `cargo test --test conformance`: `SQUALL_IUT` (with
    /// `SQUALL_REFERENCE_MUTANT`), `SQUALL_LEVEL`, `SQUALL_PROFILES` (the profiles judged;
    /// `SQUALL_PROFILE` still works and is deprecated), `SQUALL_TAGS`, `SQUALL_TIME_SCALE`,
    /// `SQUALL_MAX_TIME_SCALE`, `SQUALL_CASE_TIMEOUT`, `SQUALL_CONCURRENCY`, `SQUALL_SEED`,
    /// `SQUALL_HERD`, `SQUALL_TLS` (`true`: serve over TLS), `SQUALL_SHARD`, `SQUALL_CASES`
    /// (comma-separated case ids).
    pub fn from_env() -> Result<SuiteSettings, SettingsError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// As [`Self::from_env`], from `var` (empty values count as unset).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<SuiteSettings, SettingsError> {
        let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let mut settings = SuiteSettings::new(Source::Environment);
        settings.iut = match (var("SQUALL_IUT"), var("SQUALL_REFERENCE_MUTANT")) {
            (None, Some(mutant)) => Some(format!("reference:{mutant}")),
            (Some(iut), Some(mutant)) if iut.trim() == "reference" => Some(format!("reference:{mutant}")),
            (iut, _) => iut,
        };
        settings.level = var("SQUALL_LEVEL");
        settings.profiles = match (var("SQUALL_PROFILES"), var("SQUALL_PROFILE")) {
            (Some(profiles), _) => vec![profiles],
            (None, Some(profiles)) => {
                settings.deprecations.push(format!(
                    "SQUALL_PROFILE={profiles}: for the profiles judged, SQUALL_PROFILE is deprecated; use \
                     SQUALL_PROFILES (SQUALL_PROFILE is the agent profile the implementation receives)"
                ));
                vec![profiles]
            }
            (None, None) => Vec::new(),
        };
        settings.tags = var("SQUALL_TAGS");
        settings.clock = var("SQUALL_CLOCK");
        settings.time_scale = parse_var("SQUALL_TIME_SCALE", var("SQUALL_TIME_SCALE"), SCALE)?;
        settings.max_time_scale = parse_var("SQUALL_MAX_TIME_SCALE", var("SQUALL_MAX_TIME_SCALE"), SCALE)?;
        settings.case_timeout_s = parse_var("SQUALL_CASE_TIMEOUT", var("SQUALL_CASE_TIMEOUT"), SECONDS)?;
        settings.concurrency = parse_var("SQUALL_CONCURRENCY", var("SQUALL_CONCURRENCY"), COUNT)?;
        settings.seed = parse_var("SQUALL_SEED", var("SQUALL_SEED"), "an unsigned integer")?;
        settings.herd = parse_var("SQUALL_HERD", var("SQUALL_HERD"), HERD)?;
        settings.tls = parse_var::<bool>("SQUALL_TLS", var("SQUALL_TLS"), "true or false")?.unwrap_or(false);
        settings.warm = parse_var::<bool>("SQUALL_WARM", var("SQUALL_WARM"), "true or false")?.unwrap_or(false);
        settings.shard = var("SQUALL_SHARD");
        settings.cases = var("SQUALL_CASES")
            .map(|ids| ids.split(',').map(|id| id.trim().to_owned()).filter(|id| !id.is_empty()).collect())
            .unwrap_or_default();
        Ok(settings)
    }

    /// The configuration these settings ask for, with the defaults for what they leave out.
    pub fn resolve(self) -> Result<Resolved, SettingsError> {
        let iut = parse_iut(self.iut.as_deref().unwrap_or("reference"), self.source)?;
        let level = match &self.level {
            Some(text) => {
                Level::parse(text.trim()).ok_or_else(|| self.invalid("level", text, "wire, events or tasks"))?
            }
            None if matches!(iut, Iut::Reference { .. }) => Level::Tasks,
            None => Level::Events,
        };
        let profiles = ProfileSelection::parse(&self.profiles).map_err(|unknown| {
            self.invalid(
                "profiles",
                &self.profiles.join(","),
                &format!("a profile squall knows (`{}` is not one): {}", unknown.0, UnknownProfile::known()),
            )
        })?;
        let clock = match &self.clock {
            Some(text) => ClockMode::parse(text.trim()).ok_or_else(|| self.invalid("clock", text, CLOCK))?,
            None => ClockMode::Scaled,
        };
        let time_scale = self.time_scale.unwrap_or(DEFAULT_TIME_SCALE);
        let max_time_scale = self.max_time_scale.unwrap_or(DEFAULT_MAX_TIME_SCALE);
        if time_scale > max_time_scale {
            let expected = format!("at most the max time scale ({max_time_scale}), which a case may be raised to");
            return Err(self.invalid("time-scale", &time_scale.to_string(), &expected));
        }
        let case_timeout = self.case_timeout_s.unwrap_or(DEFAULT_CASE_TIMEOUT_S);
        if !(case_timeout > 0.0 && case_timeout.is_finite()) {
            return Err(self.invalid("case-timeout", &case_timeout.to_string(), SECONDS));
        }
        let concurrency = self.concurrency.unwrap_or(DEFAULT_CONCURRENCY);
        if concurrency == 0 {
            return Err(self.invalid("concurrency", "0", COUNT));
        }
        let herd = self.herd.unwrap_or(DEFAULT_HERD);
        if !HERD_SIZES.contains(&herd) {
            return Err(self.invalid("herd", &herd.to_string(), HERD));
        }
        let shard = match &self.shard {
            Some(text) => Some(text.parse::<Shard>().map_err(|_| self.invalid("shard", text, SHARD))?),
            None => None,
        };
        let catalogue = Catalogue::from_dir_or_embedded(self.scenarios.as_deref())?;
        let features = features_dir(self.features.as_deref()).map_err(SettingsError::Features)?;
        if !self.cases.is_empty() {
            let known = crate::cases::from_dir(features.path())
                .map(|plans| plans.into_iter().map(|p| p.id).collect::<Vec<_>>());
            if let Some(unknown) = self.cases.iter().find(|id| known.as_ref().is_ok_and(|known| !known.contains(id))) {
                return Err(self.invalid(
                    "case",
                    unknown,
                    "the id of a case of the features (`squall cases` lists them)",
                ));
            }
        }
        let mut config = SuiteConfig::new(iut, features.path().to_owned(), catalogue);
        config.level = level;
        config.clock = clock;
        config.profiles = profiles;
        config.tags = self.tags;
        config.time_scale = time_scale;
        config.max_time_scale = max_time_scale;
        config.case_timeout = Duration::from_secs_f64(case_timeout);
        config.concurrency = concurrency;
        config.seed = self.seed;
        config.herd = herd;
        config.tls = self.tls;
        config.warm = self.warm;
        config.shard = shard;
        config.cases = self.cases;
        Ok(Resolved { config, features })
    }

    /// `name` is the flag's name (`time-scale`); the variable is `SQUALL_TIME_SCALE`.
    fn invalid(&self, name: &str, value: &str, expected: &str) -> SettingsError {
        SettingsError::Invalid { setting: setting(self.source, name, value), expected: expected.to_owned() }
    }
}

const SCALE: &str = TimeScale::RANGE;
const CLOCK: &str = "`auto` (sped up where squall's clock reaches the client, else scaled), `accelerated` (its process runs on squall's sped-up clock) or `scaled` (the client scales its own waits by SQUALL_TIME_SCALE)";
const SECONDS: &str = "a positive number of seconds";
const COUNT: &str = "a whole number of at least 1";
const HERD: &str = "a whole number from 10 to 500";
const SHARD: &str = "K/N, the K-th of N parts of the cases (1 <= K <= N)";

/// How the user wrote a setting: `--time-scale 2` or `SQUALL_TIME_SCALE=2`.
fn setting(source: Source, name: &str, value: &str) -> String {
    match (source, name) {
        (Source::Flags, "profiles") => format!("--profile {value}"),
        (Source::Flags, name) => format!("--{name} {value}"),
        (Source::Environment, "case") => format!("SQUALL_CASES={value}"),
        (Source::Environment, name) => format!("SQUALL_{}={value}", name.replace('-', "_").to_uppercase()),
    }
}

fn parse_var<T: std::str::FromStr>(
    name: &str,
    text: Option<String>,
    expected: &str,
) -> Result<Option<T>, SettingsError> {
    text.map(|text| {
        text.trim()
            .parse()
            .map_err(|_| SettingsError::Invalid { setting: format!("{name}={text}"), expected: expected.to_owned() })
    })
    .transpose()
}

/// `reference`, `reference:<mutant>` (a mutant this build knows), or a command.
pub fn parse_iut(text: &str, source: Source) -> Result<Iut, SettingsError> {
    let invalid = |expected: String| SettingsError::Invalid { setting: setting(source, "iut", text), expected };
    match text.trim() {
        "" => Err(invalid("`reference` or a command".to_owned())),
        "reference" => Ok(Iut::Reference { mutant: None }),
        other => match other.strip_prefix("reference:") {
            Some(mutant) => {
                check_mutant(mutant).map_err(invalid)?;
                Ok(Iut::Reference { mutant: Some(mutant.to_owned()) })
            }
            None => Ok(Iut::Command(other.to_owned())),
        },
    }
}

#[cfg(feature = "reference")]
fn check_mutant(name: &str) -> Result<(), String> {
    use squall_reference::mutants::Mutant;
    match Mutant::parse(name) {
        Some(_) => Ok(()),
        None => {
            let known: Vec<&str> = Mutant::ALL.iter().map(|m| m.name()).collect();
            Err(format!("a mutant squall knows: {}", known.join(", ")))
        }
    }
}

#[cfg(not(feature = "reference"))]
fn check_mutant(_: &str) -> Result<(), String> {
    Err("a squall built with the reference implementation (cargo feature `reference`)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Result<SuiteSettings, SettingsError> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        SuiteSettings::from_vars(move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    fn resolved(settings: SuiteSettings) -> SuiteConfig {
        settings.resolve().expect("resolves").config
    }

    #[test]
    fn flags_and_environment_share_one_set_of_defaults() {
        let from_flags = resolved(SuiteSettings::new(Source::Flags));
        let from_env = resolved(env(&[]).expect("no variables"));
        for config in [&from_flags, &from_env] {
            assert_eq!(config.level, Level::Tasks, "the reference declares tasks");
            assert_eq!((config.time_scale, config.max_time_scale), (DEFAULT_TIME_SCALE, DEFAULT_MAX_TIME_SCALE));
            assert_eq!((config.case_timeout, config.concurrency), (Duration::from_secs(60), DEFAULT_CONCURRENCY));
            assert_eq!(config.profiles.describe(), ProfileSelection::default().describe());
            assert_eq!(config.herd, DEFAULT_HERD);
        }
        // An outside implementation is judged at `events` unless it says otherwise, both ways.
        let mut flags = SuiteSettings::new(Source::Flags);
        flags.iut = Some("python3 my_agent.py".to_owned());
        assert_eq!(resolved(flags).level, Level::Events);
        assert_eq!(resolved(env(&[("SQUALL_IUT", "python3 my_agent.py")]).expect("reads")).level, Level::Events);
    }

    #[test]
    fn errors_name_the_flag_or_the_variable_and_the_value() {
        let mut flags = SuiteSettings::new(Source::Flags);
        flags.time_scale = Some(TimeScale::of(2.0));
        let error = flags.resolve().expect_err("above the max").to_string();
        assert_eq!(error, "--time-scale 2: expected at most the max time scale (1), which a case may be raised to");
        let error = env(&[("SQUALL_TIME_SCALE", "fast")]).expect_err("not a number").to_string();
        assert_eq!(error, "SQUALL_TIME_SCALE=fast: expected a number in (0, 100]");
        let error = env(&[("SQUALL_MAX_TIME_SCALE", "0")]).expect_err("out of range").to_string();
        assert_eq!(error, "SQUALL_MAX_TIME_SCALE=0: expected a number in (0, 100]");
        let error = env(&[("SQUALL_LEVEL", "all")]).expect("reads").resolve().expect_err("no such level");
        assert_eq!(error.to_string(), "SQUALL_LEVEL=all: expected wire, events or tasks");
        let error = env(&[("SQUALL_PROFILES", "prd-9999")]).expect("reads").resolve().expect_err("no such profile");
        assert!(error.to_string().starts_with("SQUALL_PROFILES=prd-9999: expected"), "{error}");
        let mut flags = SuiteSettings::new(Source::Flags);
        flags.concurrency = Some(0);
        assert!(flags.resolve().expect_err("none at once").to_string().starts_with("--concurrency 0:"));
        let error = env(&[("SQUALL_HERD", "3")]).expect("reads").resolve().expect_err("too small a herd");
        assert_eq!(error.to_string(), "SQUALL_HERD=3: expected a whole number from 10 to 500");
        assert_eq!(resolved(env(&[("SQUALL_HERD", "25")]).expect("reads")).herd, 25);
        let error = env(&[("SQUALL_SHARD", "3/2")]).expect("reads").resolve().expect_err("no third of two");
        assert_eq!(error.to_string(), "SQUALL_SHARD=3/2: expected K/N, the K-th of N parts of the cases (1 <= K <= N)");
        let mut flags = SuiteSettings::new(Source::Flags);
        flags.shard = Some("2/3".to_owned());
        assert_eq!(resolved(flags).shard.map(|s| s.to_string()).as_deref(), Some("2/3"));
        let cases = env(&[("SQUALL_CASES", "req-0006-001/status-503-is-retried, req-0006-001/status-408-is-retried")]);
        assert_eq!(resolved(cases.expect("reads")).cases.len(), 2);
        let error = env(&[("SQUALL_CASES", "req-0006-001/nope")]).expect("reads").resolve().expect_err("no such case");
        assert!(error.to_string().starts_with("SQUALL_CASES=req-0006-001/nope: expected the id of a case"), "{error}");
    }

    #[test]
    fn the_old_name_for_the_judged_profiles_still_works_with_a_deprecation() {
        let settings = env(&[("SQUALL_PROFILE", "all")]).expect("reads");
        assert_eq!(settings.profiles, ["all"]);
        assert!(settings.deprecations[0].contains("use SQUALL_PROFILES"), "{:?}", settings.deprecations);
        let settings = env(&[("SQUALL_PROFILES", "seed-002"), ("SQUALL_PROFILE", "all")]).expect("reads");
        assert_eq!((settings.profiles.as_slice(), settings.deprecations.len()), (&["seed-002".to_owned()][..], 0));
    }

    #[test]
    fn a_mutant_is_named_by_the_iut_or_by_its_own_variable() {
        let settings = env(&[("SQUALL_REFERENCE_MUTANT", "zero-jitter")]).expect("reads");
        assert_eq!(settings.iut.as_deref(), Some("reference:zero-jitter"));
        let error = parse_iut("reference:nonsense", Source::Flags).expect_err("unknown");
        assert!(error.to_string().starts_with("--iut reference:nonsense: expected"), "{error}");
    }
}
