//! The S3 server the tests, the demo and the benchmarks run on loopback: s3s-fs's storage
//! (objects as files under a root folder) served by s3s, like the stock `s3s-fs` binary, with one
//! difference that matters for measurements: every accepted connection has `TCP_NODELAY` set.
//!
//! The stock binary leaves Nagle's algorithm on. Its GET answers go out as two writes (the head,
//! then the body), so on a kept-alive connection the body waits for the client's ACK of the head,
//! which Linux delays by up to 40 ms: in a probe, 47 of 60 sequential GETs of 5 KiB objects took
//! ~44 ms instead of ~2 ms. S3 itself has no such stall, and every client suffers it alike, so it
//! turned the medians of GET-bound benchmark scenarios into luck.
//!
//! Usage (the stock binary's flags, so the harness can start either):
//! `s3sync-test-s3 --host 127.0.0.1 --port N [--access-key K --secret-key S] ROOT`

use std::path::PathBuf;
use std::process::ExitCode;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnectionBuilder;
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use s3s_fs::FileSystem;
use tokio::net::TcpListener;

/// What the command line asks for.
struct Options {
    host: String,
    port: u16,
    credentials: Option<(String, String)>,
    root: PathBuf,
}

/// Reads the flags; an error names what is wrong.
fn parse_options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut host = String::from("127.0.0.1");
    let mut port: u16 = 8014;
    let mut access_key = None;
    let mut secret_key = None;
    let mut root = None;
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--host" => host = value("--host")?,
            "--port" => {
                let text = value("--port")?;
                port = text
                    .parse()
                    .map_err(|_| format!("--port: not a port number: {text}"))?;
            }
            "--access-key" => access_key = Some(value("--access-key")?),
            "--secret-key" => secret_key = Some(value("--secret-key")?),
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}")),
            _ if root.is_some() => return Err(format!("one root folder only, got also {arg}")),
            _ => root = Some(PathBuf::from(arg)),
        }
    }
    let credentials = match (access_key, secret_key) {
        (Some(access), Some(secret)) => Some((access, secret)),
        (None, None) => None,
        _ => return Err("--access-key and --secret-key go together".into()),
    };
    let root = root.ok_or("the root folder is missing")?;
    Ok(Options {
        host,
        port,
        credentials,
        root,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse_options(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("s3sync-test-s3: {message}");
            eprintln!(
                "usage: s3sync-test-s3 --host H --port N [--access-key K --secret-key S] ROOT"
            );
            return ExitCode::from(2);
        }
    };
    match serve(options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("s3sync-test-s3: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Serves until the listener fails or the process is told to stop.
async fn serve(options: Options) -> Result<(), String> {
    let storage = FileSystem::new(&options.root)
        .map_err(|error| format!("{}: {error:?}", options.root.display()))?;
    let mut builder = S3ServiceBuilder::new(storage);
    if let Some((access, secret)) = options.credentials {
        builder.set_auth(SimpleAuth::from_single(access, secret));
    }
    let service = builder.build();
    let listener = TcpListener::bind((options.host.as_str(), options.port))
        .await
        .map_err(|error| format!("listen on {}:{}: {error}", options.host, options.port))?;
    let connections = ConnectionBuilder::new(TokioExecutor::new());
    loop {
        let socket = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => socket,
                // A connection that failed as it was accepted (the peer gone, or out of file
                // descriptors for a moment) is that connection's problem, not the server's.
                Err(error) => {
                    eprintln!("s3sync-test-s3: accept: {error}");
                    continue;
                }
            },
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        // The point of this binary (see the module docs).
        if let Err(error) = socket.set_nodelay(true) {
            eprintln!("s3sync-test-s3: TCP_NODELAY: {error}");
        }
        let connection = connections
            .serve_connection(TokioIo::new(socket), service.clone())
            .into_owned();
        tokio::spawn(async move {
            // A client that hangs up mid-request ends only its own connection.
            let _ = connection.await;
        });
    }
}
