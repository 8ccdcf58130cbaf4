//! The judge as a service gives the reference `squall run`'s verdict on every case (the service
//! judges one case at a time: the test mostly waits).

use squall_suite::Verdict;

use crate::kit::command::squall_bin;
use crate::kit::harness::require;
use crate::light_suites::service::same_verdicts_both_ways;

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn through_the_service_the_reference_gets_squall_runs_verdict_on_every_case() {
    let command = format!("'{}' reference-iut", squall_bin());
    let verdicts = same_verdicts_both_ways(&command).await;
    require(verdicts.len() > 40, &format!("{} cases", verdicts.len()));
    require(verdicts.values().all(|v| *v == Verdict::Pass), &format!("the reference passes: {verdicts:?}"));
}
