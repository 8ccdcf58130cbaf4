//! A connection's life below HTTP: accepted (`accept_errors`) and served on threads of its own
//! or the caller's (`serving_threads`); its bytes, plain or under TLS (`wire_io`, `tls`), behind
//! a socket squall can kill mid-reply (`conn_io`); its deadlines and hang-ups (`head_deadline`,
//! `hang_up`); and HTTP/2's frames as they pass, the limits a client meets and the streams squall
//! ends with a code of its choosing (`h2_frames`, `h2_limits`, `stream_reset`).

pub(in crate::server) mod accept_errors;
pub(in crate::server) mod conn_io;
pub(in crate::server) mod h2_frames;
pub(in crate::server) mod h2_limits;
pub(in crate::server) mod hang_up;
pub(in crate::server) mod head_deadline;
pub(in crate::server) mod serving_threads;
pub(in crate::server) mod stream_reset;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls;
pub(in crate::server) mod wire_io;
