//! The readiness probe of a test Redis: PING over a plain socket, std only, so that xtask (which has no dependencies) compiles this same file.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// True when a server on the loopback port answers PING with PONG (not
/// LOADING).
pub(crate) fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 64];
    matches!(stream.read(&mut buf), Ok(n) if buf[..n].starts_with(b"+PONG"))
}
