//! The scenario parser (TOML and inline JSON) and the reply planner on arbitrary input: an
//! error naming the field for anything invalid, never a panic; every valid scenario's attempts
//! can be rendered and planned for every API (Responses, Chat Completions, Messages), streamed
//! or not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use squall::scenario::load::{from_json_value, from_toml_str};
use squall::journal::Api;
use squall::wire::reply::build_reply;
use squall::wire::ReplyContext;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut scenarios = Vec::new();
    if let Ok(scenario) = from_toml_str("fuzz.toml", &text) {
        scenarios.push(scenario);
    }
    if let Ok(value) = serde_json::from_slice(data) {
        if let Ok(scenario) = from_json_value(value) {
            scenarios.push(scenario);
        }
    }
    for scenario in scenarios {
        let attempts = scenario.attempts.iter().chain(scenario.tracks.iter().flat_map(|t| t.attempts.iter()));
        for attempt in attempts {
            for api in Api::ALL {
                for stream in [true, false] {
                    let _ = build_reply(attempt, api, stream, &ReplyContext::placeholder(), 0.001);
                }
            }
        }
    }
});
