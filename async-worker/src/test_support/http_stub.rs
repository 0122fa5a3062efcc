//! A stand-in HTTP/1.1 server on plain tokio: each request is recorded and answered by a closure (a stand-in Prometheus, a model server's /metrics).
//!
//! Deliberately tiny: one request per connection (`Connection: close`),
//! `Content-Length` bodies only. The metric gates' unit tests compile this
//! file by path, so it needs nothing beyond tokio.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the stub received it.
#[derive(Debug, Clone, Default)]
pub struct StubRequest {
    pub method: String,
    /// The request target: path and query.
    pub target: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl StubRequest {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Answers a request: status code and body.
pub type Responder = Arc<dyn Fn(&StubRequest) -> (u16, String) + Send + Sync>;

/// A running stub; stops when dropped.
#[derive(Debug)]
pub struct HttpStub {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<StubRequest>>>,
    task: tokio::task::JoinHandle<()>,
}

impl HttpStub {
    /// Starts on an ephemeral port of 127.0.0.1.
    pub async fn start(responder: Responder) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (responder, seen) = (responder.clone(), seen.clone());
                tokio::spawn(async move {
                    let _ = serve(stream, &responder, &seen).await;
                });
            }
        });
        Ok(HttpStub {
            addr,
            requests,
            task,
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<StubRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for HttpStub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut stream: TcpStream,
    responder: &Responder,
    seen: &Mutex<Vec<StubRequest>>,
) -> std::io::Result<()> {
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        received.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&received[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let mut request = StubRequest {
        method: request_line.next().unwrap_or_default().to_owned(),
        target: request_line.next().unwrap_or_default().to_owned(),
        ..StubRequest::default()
    };
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            let header = (name.trim().to_ascii_lowercase(), value.trim().to_owned());
            request.headers.push(header);
        }
    }
    let length: usize = request
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = received[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    request.body = String::from_utf8_lossy(&body).into_owned();
    let (status, answer) = responder(&request);
    seen.lock().unwrap().push(request);
    let response = format!(
        "HTTP/1.1 {status} Stub\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
        answer.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}
