//! What a service writes to its log, read from the shop in a process of its own with its
//! output on a pipe, as a log collector reads it.

use crate::support::child::{Process, library_command, shop_command};
use std::io::{BufRead, Read};
use std::process::Stdio;

/// The lines the shop writes before it says where it listens (debug logging on, so its
/// migrations log), the libtest prefix of the first taken off.
fn lines_until_listening(format: Option<&str>) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("logs.db").display());
    let mut command = shop_command(&url);
    command.env("RUST_LOG", "debug").env_remove("NO_COLOR").stdout(Stdio::piped()).stderr(Stdio::null());
    if let Some(f) = format {
        command.env("LOG_FORMAT", f);
    }
    let mut child = Process(command.spawn().unwrap());
    let mut out = Vec::new();
    for line in std::io::BufReader::new(child.0.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.contains("listening on ") {
            return out;
        }
        out.push(line);
    }
    panic!("the shop did not start: {out:?}");
}

#[test]
fn a_log_on_a_pipe_has_no_colour_codes() {
    let lines = lines_until_listening(None);
    let logged: Vec<&String> = lines.iter().filter(|l| l.contains(" DEBUG ") || l.contains(" INFO ")).collect();
    assert!(!logged.is_empty(), "debug logging writes lines: {lines:?}");
    assert!(lines.iter().all(|l| !l.contains('\u{1b}')), "no escape codes: {logged:?}");
}

#[test]
fn log_format_json_writes_one_json_object_a_line() {
    let lines = lines_until_listening(Some("json"));
    let objects: Vec<serde_json::Value> = lines
        .iter()
        .filter_map(|l| l.find('{').map(|at| &l[at..]))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(!objects.is_empty(), "debug logging writes lines: {lines:?}");
    for o in &objects {
        assert!(o["level"].is_string() && o["timestamp"].is_string() && o["fields"].is_object(), "{o}");
    }
    assert!(lines.iter().all(|l| !l.contains('\u{1b}')));
}

#[test]
fn an_unknown_log_format_stops_the_start_saying_why() {
    let out = shop_command("sqlite::memory:").env("LOG_FORMAT", "yaml").stdout(Stdio::null()).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("LOG_FORMAT must be `text` or `json`, not `yaml`"), "{err}");
}

#[test]
fn a_log_filter_that_does_not_parse_stops_the_start_saying_why() {
    let mut command = shop_command("sqlite::memory:");
    command.env("RUST_LOG", "info,sqlx=loud").stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = Process(command.spawn().unwrap());
    // A shop that started anyway would serve until killed: fail on its address instead.
    let stdout = std::io::BufReader::new(child.0.stdout.take().unwrap());
    let started = stdout.lines().map_while(Result::ok).find(|l| l.contains("listening on "));
    assert_eq!(started, None, "the shop started with a filter it cannot read");
    assert!(!child.0.wait().unwrap().success());
    let mut err = String::new();
    child.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(
        err.contains("RUST_LOG must be a level or `target=level` pairs") && err.contains("`info,sqlx=loud`"),
        "{err}"
    );
}

/// An API key sent in the query string (the library takes them as `library_key`) is not
/// in the log, not even in the request's span, which is made before the key is checked.
#[test]
fn a_query_string_api_key_never_reaches_the_log() {
    // The test's client is reqwest on rustls without a provider of its own: run alone, no
    // other test has installed one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("keys.db").display());
    let mut command = library_command(&url);
    command.env("RUST_LOG", "info,tower_http=debug").env("NO_COLOR", "1").stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = Process(command.spawn().unwrap());
    let mut lines = std::io::BufReader::new(child.0.stdout.take().unwrap()).lines().map_while(Result::ok);
    let address = lines
        .by_ref()
        .find_map(|l| l.split("listening on http://").nth(1).map(str::to_owned))
        .expect("the library starts");
    const SECRET: &str = "rk_0123456789abcdef0123456789abcdef_NotForTheLog";
    let runtime = restgen::__private::tokio::runtime::Runtime::new().unwrap();
    let status = runtime.block_on(async {
        let r = reqwest::get(format!("http://{address}/books?page=1&library_key={SECRET}")).await.unwrap();
        r.status().as_u16()
    });
    assert_eq!(status, 401, "an unknown key");
    let logged: Vec<String> = lines.take_while(|l| !l.contains("finished processing request")).collect();
    let span = logged.iter().find(|l| l.contains("uri=")).unwrap_or_else(|| panic!("no request span: {logged:?}"));
    assert!(span.contains("library_key=***"), "{span}");
    assert!(logged.iter().all(|l| !l.contains("NotForTheLog")), "{logged:?}");
    child.kill();
}

/// Every line the shop logs while it answers a request carries the id the answer gives
/// the caller, as text (`request{request_id=…}`) and as JSON (the span's field), so that
/// an id quoted in a report finds the request's lines.
#[test]
fn every_line_of_a_request_carries_its_id() {
    // No service of this process installs it for the test's client.
    let _ = rustls::crypto::ring::default_provider().install_default();
    for format in ["text", "json"] {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("ids.db").display());
        let mut command = shop_command(&url);
        command.env("RUST_LOG", "info,tower_http=debug").env("NO_COLOR", "1").env("LOG_FORMAT", format);
        let mut child = Process(command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap());
        let mut lines = std::io::BufReader::new(child.0.stdout.take().unwrap()).lines().map_while(Result::ok);
        let address = lines
            .by_ref()
            .find_map(|l| l.split("listening on http://").nth(1).map(str::to_owned))
            .expect("the shop starts");
        let runtime = restgen::__private::tokio::runtime::Runtime::new().unwrap();
        let id = runtime.block_on(async {
            let r = reqwest::get(format!("http://{address}/api/orders")).await.unwrap();
            assert_eq!(r.status(), 401);
            r.headers()["x-request-id"].to_str().unwrap().to_owned()
        });
        let mut logged = Vec::new();
        for line in lines.by_ref() {
            let last = line.contains("finished processing request");
            logged.push(line);
            if last {
                break;
            }
        }
        let request_lines: Vec<&String> = logged.iter().filter(|l| l.contains("processing request")).collect();
        assert!(request_lines.len() >= 2, "{format}: the request's lines: {logged:?}");
        for line in request_lines {
            match format {
                "text" => assert!(line.contains(&format!("request{{request_id={id}}}")), "{line}"),
                _ => {
                    let object: serde_json::Value = serde_json::from_str(&line[line.find('{').unwrap()..]).unwrap();
                    assert!(object["spans"].as_array().unwrap().iter().any(|s| s["request_id"] == id), "{object}");
                }
            }
        }
        child.kill();
    }
}
