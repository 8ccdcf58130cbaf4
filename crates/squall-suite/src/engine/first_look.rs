//! A first look at a case's own scale before a long raised run. A case whose timing checks need a
//! slower scale than it asked for (a client with a wide reaction) runs slowly — and a client
//! whose backoff has no cap makes that run minutes long: the Vercel AI SDK's 11-attempt case
//! waits 2,046 s of policy time, 17 minutes at 1/2. Yet a miss needs no such scale: a bound a
//! client misses with the benefit of the doubt is missed at any scale (`Margin::read`), once no
//! busy machine's stall can explain it. So where the raised run could be long, the case first
//! runs at its own scale; a miss a stall could explain there is run again at the scale the
//! missed checks' own margins need (the cap's 4 s needs far less than growth's 0.5 s). What
//! decides on the way stands; anything else goes on to the raised run as planned.

use crate::cases::CasePlan;
use crate::results::CaseRecord;
use crate::timing::margin::slower;
use crate::timing::{choose_scale, scale_name, Allowance, Reaction, ScaleChoice};
use crate::verdict::Verdict;
use squall::clock::TimeScale;

/// Retries a case allows when it configures none: seed 000's default, "`ProviderRetryOptions.maxRetries`
/// 默认值为 **6**".
const DEFAULT_RETRIES: u32 = 6;

/// A raised run that a backoff doubling from seed 002's "基础延迟（默认 1 秒）" without a cap
/// would keep longer than this (real seconds) gets a first look.
const LONG_RUN_S: f64 = 20.0;

/// How much slower than the case's own scale the raised run must be for a first look: at this
/// raise the look costs at most a quarter of the run it may save.
const MIN_RAISE: f64 = 4.0;

/// Runs a first look may take: one, and draws anew for a client whose random waits one run
/// cannot read (three runs that each miss growth on their own confirm the miss).
pub(super) const FIRST_LOOK_RUNS: usize = 3;

/// The first look a case gets before `raised`, when it gets one: not for a herd (a look would
/// start every instance of it), and only where the raised run is at least [`MIN_RAISE`] slower
/// than the case's own scale and a doubling backoff without a cap over the case's retries would
/// keep it running longer than [`LONG_RUN_S`].
pub(super) fn first_look(plan: &CasePlan, herd: bool, raised: &ScaleChoice) -> Option<ScaleChoice> {
    let raise = raised.time_scale.ratio_to(raised.asked);
    let retries = plan.setup.max_retries.unwrap_or(DEFAULT_RETRIES).min(30);
    let uncapped_doubling_s = 2f64.powi(retries as i32) - 1.0;
    let raised_real_s = uncapped_doubling_s * raised.time_scale.get();
    if herd || raise < MIN_RAISE || raised_real_s <= LONG_RUN_S {
        return None;
    }
    let note = format!(
        "run first at {}, its own scale: a miss there is a miss at any scale, and its checks' margins \
         would need {} (a backoff doubling from 1 s without a cap over its {retries} retries would take \
         {raised_real_s:.0} s real there)",
        scale_name(raised.asked),
        scale_name(raised.time_scale)
    );
    Some(ScaleChoice { time_scale: raised.asked, asked: raised.asked, note: Some(note), beyond_max: false })
}

/// The note of the raised run that follows a first look which did not decide: `raised`'s own,
/// with why the look could not decide.
pub(super) fn after_first_look(raised: &ScaleChoice, why: &str) -> ScaleChoice {
    let look = format!("a first look at {} could not decide ({why})", scale_name(raised.asked));
    let note = Some(raised.note.as_ref().map_or(look.clone(), |note| format!("{look}; {note}")));
    ScaleChoice { note, ..raised.clone() }
}

/// Where a look could not decide, the next look: when `record` (the look at `look`) failed a
/// check, at the scale that check's own margin needs for this `reaction` — at least the next
/// rung, and only while that is faster than `raised`.
pub(super) fn confirming_look(
    plan: &CasePlan,
    record: &CaseRecord,
    look: TimeScale,
    raised: &ScaleChoice,
    (reaction, machine): (&Reaction, Allowance),
) -> Option<ScaleChoice> {
    let failed = |step: &String| record.checks.iter().any(|c| &c.name == step && c.verdict == Verdict::Fail);
    let missed: Vec<_> = plan.margins().into_iter().filter(|(step, _)| failed(step)).collect();
    let names: Vec<&str> = missed.iter().map(|(step, _)| step.as_str()).collect();
    let needed = choose_scale(raised.asked, raised.time_scale, &missed, reaction, machine).time_scale;
    let time_scale = needed.max(slower(look, raised.time_scale)?);
    if missed.is_empty() || time_scale >= raised.time_scale {
        return None;
    }
    let note = format!(
        "run at {} to confirm what `{}` missed at {} (a busy machine could explain it there), before \
         the {} its other checks' margins need",
        scale_name(time_scale),
        names.join("`, `"),
        scale_name(look),
        scale_name(raised.time_scale)
    );
    Some(ScaleChoice { time_scale, asked: raised.asked, note: Some(note), beyond_max: false })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::from_texts;
    use crate::features::embedded_features;
    use crate::timing::Margin;

    fn case(id: &str) -> CasePlan {
        let plans = from_texts(embedded_features().iter().copied()).expect("the built-in features read");
        plans.into_iter().find(|p| p.id == id).expect("the case is built in")
    }

    fn raised_to(scale: f64) -> ScaleChoice {
        let asked = TimeScale::of(0.01);
        ScaleChoice { time_scale: TimeScale::new(scale).expect("a scale"), asked, note: None, beyond_max: false }
    }

    #[test]
    fn a_look_comes_first_only_where_an_uncapped_doubling_would_make_the_raised_run_long() {
        let cap = case("req-0006-002/with-more-retries-configured-the-waits-reach-a-cap");
        let seven = case("req-0006-002/waits-grow-exponentially");
        // Ten retries: 1,023 s of doubling, 51 s of real time at 1/20.
        assert!(first_look(&cap, false, &raised_to(0.05)).is_some_and(|look| look.time_scale == TimeScale::of(0.01)));
        assert!(first_look(&cap, false, &raised_to(0.01 * 3.0)).is_none(), "raised less than 4×");
        assert!(first_look(&cap, true, &raised_to(0.5)).is_none(), "a herd is never looked at");
        // The default six retries: 63 s of doubling, 31.5 s at 1/2 but 12.6 s at 1/5.
        assert!(first_look(&seven, false, &raised_to(0.5)).is_some());
        assert!(first_look(&seven, false, &raised_to(0.2)).is_none());
    }

    #[test]
    fn a_miss_is_confirmed_at_its_own_margins_scale_and_only_before_the_raised_run() {
        let cap = case("req-0006-002/with-more-retries-configured-the-waits-reach-a-cap");
        let reaction = Reaction { low_ms: 0.0, high_ms: 80.0, ..Reaction::exactly(40.0) };
        let machine = Allowance { held_back_ms: 25.0 };
        let failed = |name: &str| CaseRecord {
            checks: vec![crate::results::CheckRecord {
                name: name.to_owned(),
                level: crate::verdict::Level::Wire,
                strength: crate::verdict::Strength::Must,
                verdict: Verdict::Fail,
                expected: String::new(),
                observed: String::new(),
                draws: None,
            }],
            ..CaseRecord::judged(cap.case_name(), Vec::new(), None)
        };
        let look = TimeScale::of(0.01);
        let raised = raised_to(0.25);
        let cap_needs =
            choose_scale(look, TimeScale::REAL, &[("cap".into(), Margin::of_waits(4.0))], &reaction, machine);
        let confirming =
            confirming_look(&cap, &failed("the waits level off at a cap"), look, &raised, (&reaction, machine))
                .expect("the cap's miss is confirmed before the raised run");
        assert_eq!(confirming.time_scale, cap_needs.time_scale.max(TimeScale::of(0.02)));
        assert!(confirming.time_scale < raised.time_scale);
        // Growth's miss needs the raised scale itself; nothing missed needs no confirmation.
        let growth = failed("the waits between attempts grow exponentially");
        assert!(confirming_look(&cap, &growth, look, &raised, (&reaction, machine)).is_none());
        let nothing = CaseRecord::judged(cap.case_name(), Vec::new(), None);
        assert!(confirming_look(&cap, &nothing, look, &raised, (&reaction, machine)).is_none());
    }
}
