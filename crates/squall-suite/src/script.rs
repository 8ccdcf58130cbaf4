//! What a case's Given steps set up: its scenario (per-attempt replies, a reply for every
//! attempt, run-wide outages and a quota, or a catalogue scenario by name) and how the
//! implementation is configured for it.

use std::collections::BTreeMap;

use squall::clock::TimeScale;
use squall::scenario::{Attempt, Catalogue, Outage, Quota, Scenario};

/// Everything a case's Given steps say, before anything runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct CaseSetup {
    /// The scenario the server plays.
    pub script: ScriptBuilder,
    /// The agent profile (`SQUALL_PROFILE`): `writer`, `read-only`, ...
    pub profile: Option<String>,
    /// A fallback the implementation degrades to (`SQUALL_FALLBACK`).
    pub fallback: Option<String>,
    /// `SQUALL_MAX_RETRIES`: the configured `providerRetry.maxRetries`.
    pub max_retries: Option<u32>,
    /// A time scale the case asks for, when it needs more precision than the suite's.
    pub time_scale: Option<TimeScale>,
}

impl CaseSetup {
    /// The scale the case runs at before its timing checks raise it: its own, but never faster
    /// than the suite itself runs.
    pub(crate) fn asked_time_scale(&self, suite_time_scale: TimeScale) -> TimeScale {
        self.time_scale.map_or(suite_time_scale, |own| own.max(suite_time_scale))
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct ScriptBuilder {
    /// Replies by 1-based attempt number.
    pub attempts: BTreeMap<u32, Attempt>,
    /// The reply for every attempt not scripted one by one.
    pub every: Option<Attempt>,
    /// A catalogue scenario instead of a scripted one.
    pub catalogue: Option<String>,
    /// Run-wide outages, answering before the script.
    pub outages: Vec<Outage>,
    /// A run-wide quota, answering before the script (after the outages).
    pub quota: Option<Quota>,
}

impl ScriptBuilder {
    pub(crate) fn attempt(&mut self, number: u32) -> &mut Attempt {
        self.attempts.entry(number.max(1)).or_default()
    }

    /// The scenario for the case. Attempts not scripted get the `every` reply, or succeed.
    pub(crate) fn build(&self, name: &str, catalogue: &Catalogue) -> Result<Scenario, String> {
        if let Some(scenario) = &self.catalogue {
            return catalogue
                .get(scenario)
                .map(|s| (*s).clone())
                .ok_or_else(|| format!("no catalogue scenario `{scenario}`"));
        }
        let scripted = self.attempts.keys().max().copied().unwrap_or(0);
        let fill = || self.every.clone().unwrap_or_default();
        let mut attempts: Vec<Attempt> =
            (1..=scripted).map(|n| self.attempts.get(&n).cloned().unwrap_or_else(fill)).collect();
        if let Some(every) = &self.every {
            attempts.push(every.clone());
        }
        let mut scenario = Scenario::named(name);
        (scenario.attempts, scenario.outage, scenario.quota) = (attempts, self.outages.clone(), self.quota.clone());
        Ok(scenario)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use squall::scenario::AfterScript;

    #[test]
    fn unscripted_attempts_get_the_every_reply_and_it_repeats() {
        let mut builder = ScriptBuilder { every: Some(Attempt::status(503)), ..ScriptBuilder::default() };
        builder.attempt(2).status = Some(400);
        let scenario = builder.build("t", &Catalogue::default()).expect("builds");
        let statuses: Vec<Option<u16>> = scenario.attempts.iter().map(|a| a.status).collect();
        assert_eq!(statuses, [Some(503), Some(400), Some(503)]);
        assert_eq!(scenario.after, AfterScript::RepeatLast);
    }

    #[test]
    fn without_every_the_last_scripted_reply_repeats() {
        let mut builder = ScriptBuilder::default();
        builder.attempt(1).status = Some(502);
        builder.attempt(2);
        let scenario = builder.build("t", &Catalogue::default()).expect("builds");
        assert_eq!(scenario.attempts.len(), 2);
        assert!(!scenario.attempts[1].is_status_reply());
    }
}
