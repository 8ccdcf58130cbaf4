//! The admin API's create-run body on arbitrary bytes: a 400 naming the field at fault, a 404
//! for an unknown catalogue name, or a scenario whose every attempt can be planned for every
//! API (Responses, Chat Completions, Messages) — never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use squall::scenario::Catalogue;
use squall::server::create_run::parse_create_run;
use squall::journal::Api;
use squall::wire::reply::build_reply;
use squall::wire::ReplyContext;

fuzz_target!(|data: &[u8]| {
    let Ok(catalogue) = Catalogue::embedded() else { return };
    let Ok((scenario, time_scale)) = parse_create_run(data, &catalogue) else { return };
    let attempts = scenario.attempts.iter().chain(scenario.tracks.iter().flat_map(|t| t.attempts.iter()));
    for attempt in attempts {
        for api in Api::ALL {
            for stream in [true, false] {
                let _ = build_reply(attempt, api, stream, &ReplyContext::placeholder(), time_scale);
            }
        }
    }
});
