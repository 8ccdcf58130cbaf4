//! Threads that serve connections, each running a single-threaded tokio runtime of its own.
//!
//! A connection lives on one thread from accept to close: its reads, its scripted writes and
//! its timers never hop between workers, so serving a request costs no cross-thread wake-ups
//! (on a work-stealing runtime those were half of squall's CPU per request). Connections are
//! dealt round-robin; the accept loop stays on the runtime that started the server.

use std::future::Future;
use std::io;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::net::TcpStream;
use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

/// Where a server's connections are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Serving {
    /// On the tokio runtime that called [`crate::server::Server::start`] (in-process use, tests).
    #[default]
    CallerRuntime,
    /// On this many threads of the server's own, one single-threaded runtime each
    /// (`squall serve`: one per core).
    OwnThreads(NonZeroUsize),
}

impl Serving {
    /// One serving thread per core the process may use.
    pub fn one_thread_per_core() -> Self {
        Serving::OwnThreads(std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN))
    }
}

/// The running threads; dropping this stops them (and the connections they serve).
#[derive(Debug)]
pub(in crate::server) struct ServingThreads {
    runtimes: Vec<Handle>,
    next: AtomicUsize,
    /// Dropping these ends each thread's `block_on`, which drops its runtime.
    _stops: Vec<oneshot::Sender<()>>,
}

impl ServingThreads {
    /// Start `count` threads named `squall-serve-N`.
    pub(in crate::server) fn start(count: NonZeroUsize) -> io::Result<Self> {
        let mut runtimes = Vec::with_capacity(count.get());
        let mut stops = Vec::with_capacity(count.get());
        for n in 0..count.get() {
            let runtime = Builder::new_current_thread().enable_all().build()?;
            runtimes.push(runtime.handle().clone());
            let (stop, stopped) = oneshot::channel::<()>();
            stops.push(stop);
            std::thread::Builder::new().name(format!("squall-serve-{n}")).spawn(move || {
                let _ = runtime.block_on(stopped);
            })?;
        }
        Ok(ServingThreads { runtimes, next: AtomicUsize::new(0), _stops: stops })
    }

    /// Serve `stream` on the next thread. The socket leaves the accepting runtime's reactor and
    /// joins the serving thread's.
    pub(in crate::server) fn serve<F, Fut>(&self, stream: TcpStream, serve: F)
    where
        F: FnOnce(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let Ok(stream) = stream.into_std() else { return };
        let n = self.next.fetch_add(1, Ordering::Relaxed) % self.runtimes.len();
        self.runtimes[n].spawn(async move {
            if let Ok(stream) = TcpStream::from_std(stream) {
                serve(stream).await;
            }
        });
    }
}
