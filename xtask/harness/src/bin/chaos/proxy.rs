//! A TCP proxy between one worker and Redis that the run can cut: first a blackhole, then refusals.
//!
//! While it forwards, each accepted connection is piped to Redis. A cut has
//! two halves. Blackhole: every open connection stops forwarding in both
//! directions where it stands (a command may reach Redis while its reply
//! never comes back: the worker sees timeouts and indeterminate errors), and
//! new connections are accepted but never answered. Refuse: every held
//! connection is closed and new ones are closed as soon as they arrive. Then
//! forwarding resumes for new connections; no connection from before the cut
//! is ever resumed, so no byte stream is spliced.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Forward,
    Blackhole,
    Refuse,
}

/// A running proxy; stops when dropped.
#[derive(Debug)]
pub struct Proxy {
    pub addr: SocketAddr,
    mode: watch::Sender<Mode>,
    /// Connections accepted during a cut (held or closed at once).
    turned_away: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

/// What one cut did.
#[derive(Debug, Clone, Copy)]
pub struct CutReport {
    /// Connections open when the cut began (all of them lost).
    pub severed: usize,
    /// Connection attempts during the cut (held unanswered, then refused).
    pub turned_away: usize,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (mode, _) = watch::channel(Mode::Forward);
        let turned_away = Arc::new(AtomicUsize::new(0));
        let task = tokio::spawn(accept(
            listener,
            upstream,
            mode.clone(),
            turned_away.clone(),
        ));
        Ok(Proxy {
            addr,
            mode,
            turned_away,
            task,
        })
    }

    /// `redis://<addr>`.
    pub fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    /// Cuts the link for `length`: half blackhole, half refusals.
    pub async fn cut(&self, length: Duration) -> CutReport {
        // Each forwarding connection holds one receiver; the accept loop holds none.
        let severed = self.mode.receiver_count();
        self.turned_away.store(0, Ordering::Relaxed);
        self.mode.send_replace(Mode::Blackhole);
        tokio::time::sleep(length / 2).await;
        self.mode.send_replace(Mode::Refuse);
        tokio::time::sleep(length - length / 2).await;
        self.mode.send_replace(Mode::Forward);
        CutReport {
            severed,
            turned_away: self.turned_away.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn accept(
    listener: TcpListener,
    upstream: SocketAddr,
    mode: watch::Sender<Mode>,
    turned_away: Arc<AtomicUsize>,
) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        let now = *mode.borrow();
        if now != Mode::Forward {
            turned_away.fetch_add(1, Ordering::Relaxed);
        }
        match now {
            Mode::Forward => {
                tokio::spawn(forward(client, upstream, mode.subscribe()));
            }
            // Accepted, never answered; closed when the refusals begin.
            Mode::Blackhole => {
                let mut rx = mode.subscribe();
                tokio::spawn(async move {
                    let _held = client;
                    let _ = rx.wait_for(|m| *m != Mode::Blackhole).await;
                });
            }
            Mode::Refuse => drop(client),
        }
    }
}

/// Pipes one connection until either side closes or a cut begins; on a
/// blackhole, holds both sockets silent until the refusals, then closes them.
async fn forward(mut client: TcpStream, upstream: SocketAddr, mut mode: watch::Receiver<Mode>) {
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return; // Redis is down: the worker sees its connection close.
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => return,
        _ = mode.wait_for(|m| *m != Mode::Forward) => {}
    }
    let _ = mode.wait_for(|m| *m != Mode::Blackhole).await;
}
