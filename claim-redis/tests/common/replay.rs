//! A RESP proxy for replay tests: forwards a store's connections to a redis-server and sends every script call (EVALSHA, EVAL) twice in a row, as a cluster client resending after a connection drop would; the store sees the first answer.
//!
//! The proxy never changes a command: it reads whole RESP frames from the
//! client, writes each to the server (a script call twice, back to back on
//! the same connection, so the copy runs right after the original) and
//! hands back the replies in order, dropping the copy's reply. So a test
//! can run one sequence of operations on a direct store and on a store
//! behind this proxy and compare what the two servers end up holding.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// A running proxy; stops with the test's runtime.
pub struct ReplayProxy {
    port: u16,
    replayed: Arc<AtomicU64>,
}

impl ReplayProxy {
    /// Listens on a free loopback port and forwards to `upstream_port`.
    pub async fn start(upstream_port: u16) -> ReplayProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let port = listener.local_addr().expect("proxy address").port();
        let replayed = Arc::new(AtomicU64::new(0));
        let count = replayed.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let count = count.clone();
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(("127.0.0.1", upstream_port)).await {
                        relay(client, server, count).await;
                    }
                });
            }
        });
        ReplayProxy { port, replayed }
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// How many script calls were sent twice so far.
    pub fn replayed(&self) -> u64 {
        self.replayed.load(Ordering::Relaxed)
    }
}

/// Relays one connection until either side closes.
async fn relay(client: TcpStream, server: TcpStream, replayed: Arc<AtomicU64>) {
    let (client_read, mut client_write) = client.into_split();
    let (server_read, mut server_write) = server.into_split();
    // One entry per command sent upstream, in order: forward its reply or drop it.
    let (tx, mut rx) = mpsc::unbounded_channel::<bool>();
    let up = async move {
        let mut reader = BufReader::new(client_read);
        let mut frame = Vec::new();
        while read_frame(&mut reader, &mut frame).await.is_ok() {
            let twice = is_script_call(&frame);
            let mut out = frame.clone();
            if twice {
                out.extend_from_slice(&frame);
            }
            if server_write.write_all(&out).await.is_err() || tx.send(true).is_err() {
                break;
            }
            if twice {
                replayed.fetch_add(1, Ordering::Relaxed);
                if tx.send(false).is_err() {
                    break;
                }
            }
        }
    };
    let down = async move {
        let mut reader = BufReader::new(server_read);
        let mut frame = Vec::new();
        while read_frame(&mut reader, &mut frame).await.is_ok() {
            let Some(forward) = rx.recv().await else {
                break;
            };
            if forward && client_write.write_all(&frame).await.is_err() {
                break;
            }
        }
    };
    tokio::select! {
        () = up => {}
        () = down => {}
    }
}

/// Whether a command frame is `EVALSHA …` or `EVAL …`.
fn is_script_call(frame: &[u8]) -> bool {
    // `*<n>\r\n$<len>\r\n<name>\r\n…`
    let mut lines = frame.split(|&b| b == b'\n');
    let (Some(_), Some(_), Some(name)) = (lines.next(), lines.next(), lines.next()) else {
        return false;
    };
    let name = name.strip_suffix(b"\r").unwrap_or(name);
    name.eq_ignore_ascii_case(b"EVALSHA") || name.eq_ignore_ascii_case(b"EVAL")
}

/// Reads one whole RESP2/RESP3 frame (nested aggregates included) into `out`.
async fn read_frame<R: AsyncBufReadExt + AsyncReadExt + Unpin>(
    reader: &mut R,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    out.clear();
    let mut pending: i64 = 1;
    while pending > 0 {
        let start = out.len();
        if reader.read_until(b'\n', out).await? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let line = &out[start..];
        let kind = line[0];
        let number = || -> i64 {
            std::str::from_utf8(&line[1..])
                .ok()
                .and_then(|s| s.trim_end().parse().ok())
                .unwrap_or(0)
        };
        pending -= 1;
        match kind {
            b'$' | b'!' | b'=' => {
                let len = number();
                if len >= 0 {
                    let at = out.len();
                    out.resize(at + len as usize + 2, 0);
                    reader.read_exact(&mut out[at..]).await?;
                }
            }
            b'*' | b'~' | b'>' => pending += number().max(0),
            b'%' => pending += 2 * number().max(0),
            // Attributes precede the reply they describe.
            b'|' => pending += 2 * number().max(0) + 1,
            _ => {}
        }
    }
    Ok(())
}
