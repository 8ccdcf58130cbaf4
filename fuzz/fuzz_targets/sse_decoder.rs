//! The reference provider's SSE decoder and Responses accumulator on arbitrary bytes, fed in
//! arbitrary pieces: never a panic, only events or errors.
#![no_main]

use libfuzzer_sys::fuzz_target;
use squall_reference::provider::responses::ResponsesAccumulator;
use squall_reference::provider::sse::SseDecoder;

fuzz_target!(|data: &[u8]| {
    let (cuts, body) = data.split_at(data.len().min(4));
    let mut decoder = SseDecoder::new();
    let mut accumulator = ResponsesAccumulator::default();
    let mut rest = body;
    for cut in cuts.iter().map(|c| *c as usize + 1) {
        let (piece, tail) = rest.split_at(cut.min(rest.len()));
        rest = tail;
        match decoder.push(piece) {
            Ok(messages) => {
                for message in messages {
                    let _ = accumulator.on_message(&message, &mut |_| {});
                }
            }
            Err(_) => return,
        }
    }
    let _ = decoder.push(rest);
    let _ = accumulator.into_output();
});
