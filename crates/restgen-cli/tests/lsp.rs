//! `restgen lsp` driven as an editor drives it: LSP messages over a pipe to the real
//! binary, answers read back. The diagnostics are held to `restgen check --format json` of
//! the same text, so an editor underlines what the command reports, with its words.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// How long an answer may take before the test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(30);

struct Editor {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
}

impl Editor {
    /// `restgen lsp` started and initialized.
    fn start() -> Editor {
        let mut child = Command::new(env!("CARGO_BIN_EXE_restgen"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("restgen lsp starts");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (send, messages) = channel();
        std::thread::spawn(move || {
            loop {
                let mut length = None;
                loop {
                    let mut header = String::new();
                    if stdout.read_line(&mut header).unwrap_or(0) == 0 {
                        return;
                    }
                    let header = header.trim_end();
                    if header.is_empty() {
                        break;
                    }
                    if let Some(n) = header.strip_prefix("Content-Length: ") {
                        length = Some(n.parse::<usize>().unwrap());
                    }
                }
                let mut body = vec![0; length.expect("a Content-Length header")];
                stdout.read_exact(&mut body).unwrap();
                if send.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut editor = Editor { child, stdin, messages, next_id: 1 };
        let answer = editor.request("initialize", json!({ "processId": null, "rootUri": null, "capabilities": {} }));
        let capabilities = &answer["result"]["capabilities"];
        assert_eq!(capabilities["hoverProvider"], true, "{answer}");
        assert_eq!(capabilities["definitionProvider"], true, "{answer}");
        assert!(capabilities["completionProvider"].is_object(), "{answer}");
        editor.notify("initialized", json!({}));
        editor
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// The answer to a request (notifications that come first are passed over).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.messages.recv_timeout(PATIENCE).expect("an answer in time");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        loop {
            let message = self.messages.recv_timeout(PATIENCE).expect("diagnostics in time");
            if message["method"] == "textDocument/publishDiagnostics" && message["params"]["uri"] == uri {
                return message["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) {
        let document = json!({ "uri": uri, "languageId": "yaml", "version": 1, "text": text });
        self.notify("textDocument/didOpen", json!({ "textDocument": document }));
    }

    fn change(&mut self, uri: &str, version: i64, text: &str) {
        let params =
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] });
        self.notify("textDocument/didChange", params);
    }

    /// Completion, hover or definition at the `|` of `marked` (the document's text with
    /// the position marked).
    fn at(&mut self, method: &str, uri: &str, marked: &str) -> Value {
        let offset = marked.find('|').expect("a | marks the position");
        let line = marked[..offset].matches('\n').count();
        let character = marked[..offset].rsplit('\n').next().unwrap().encode_utf16().count();
        let params = json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } });
        self.request(method, params)["result"].clone()
    }

    fn stop(mut self) {
        let answer = self.request("shutdown", Value::Null);
        assert!(answer.get("error").is_none(), "{answer}");
        self.notify("exit", Value::Null);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "restgen lsp exits cleanly after shutdown: {status}");
    }
}

/// A schema `restgen check` finds nothing in.
const SOUND: &str = "service: shop
auth:
  principal: user
  login: { identifier: email }
resources:
  user:
    path: /users
    fields:
      name: { type: string, required: true, settable: true }
      email: { type: email, required: true, unique: true, settable: true }
      password: { type: password, required: true, settable: true }
  order:
    path: /orders
    owner: user
    fields:
      total: { type: integer, required: true, settable: true }
";

fn labels(items: &Value) -> Vec<String> {
    items.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_mistake_is_underlined_as_it_is_typed_with_the_words_of_restgen_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shop.yaml");
    let uri = format!("file://{}", path.display());
    let mut editor = Editor::start();
    editor.open(&uri, SOUND);
    assert_eq!(editor.diagnostics(&uri), Vec::<Value>::new(), "a sound schema has none");

    // A misspelt type and an owner that names no resource, as they are typed.
    let broken = SOUND.replace("type: integer", "type: integr").replace("owner: user", "owner: usr");
    editor.change(&uri, 2, &broken);
    let found = editor.diagnostics(&uri);
    std::fs::write(&path, &broken).unwrap();
    let checked =
        Command::new(env!("CARGO_BIN_EXE_restgen")).args(["check", "--format", "json"]).arg(&path).output().unwrap();
    let checked: Value = serde_json::from_slice(&checked.stdout).unwrap();
    let expected = checked["diagnostics"].as_array().unwrap();
    assert!(expected.len() >= 2, "{checked}");
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    for (lsp, check) in found.iter().zip(expected) {
        assert_eq!(lsp["code"], check["code"], "{lsp}");
        assert_eq!(lsp["source"], "restgen");
        assert_eq!(lsp["severity"], if check["severity"] == "error" { 1 } else { 2 }, "{lsp}");
        let message = lsp["message"].as_str().unwrap();
        assert!(message.starts_with(check["message"].as_str().unwrap()), "{message} / {check}");
        if let Some(help) = check["help"].as_str() {
            assert!(message.contains(&format!("help: {help}")), "{message}");
        }
        // The same place: LSP counts lines from 0, and these lines are ASCII.
        let start = &lsp["range"]["start"];
        assert_eq!(start["line"].as_u64().unwrap() + 1, check["line"].as_u64().unwrap(), "{lsp} / {check}");
        assert_eq!(start["character"].as_u64().unwrap() + 1, check["column"].as_u64().unwrap(), "{lsp} / {check}");
        let end = &lsp["range"]["end"];
        assert_eq!(end["line"].as_u64().unwrap() + 1, check["end_line"].as_u64().unwrap(), "{lsp} / {check}");
        assert_eq!(end["character"].as_u64().unwrap() + 1, check["end_column"].as_u64().unwrap(), "{lsp} / {check}");
    }
    let at = |word: &str| {
        let offset = broken.find(word).unwrap();
        (broken[..offset].matches('\n').count() as u64, broken[..offset].rsplit('\n').next().unwrap().len() as u64)
    };
    let places: Vec<(u64, u64)> = found
        .iter()
        .map(|d| (d["range"]["start"]["line"].as_u64().unwrap(), d["range"]["start"]["character"].as_u64().unwrap()))
        .collect();
    assert!(places.contains(&at("integr")), "the misspelt type is underlined: {places:?}");
    assert!(places.contains(&at("usr")), "the unknown owner is underlined: {places:?}");

    // Fixed again: the underlines go.
    editor.change(&uri, 3, SOUND);
    assert_eq!(editor.diagnostics(&uri), Vec::<Value>::new());
    editor.stop();
}

#[test]
fn keys_and_words_complete_from_the_vocabulary() {
    let uri = "file:///tmp/complete.yaml";
    let mut editor = Editor::start();
    let text = format!("{SOUND}    pagination: {{ style: cursor }}\n");
    editor.open(uri, &text);
    editor.diagnostics(uri);

    // The keys of a field, on a new line under it.
    let marked =
        SOUND.replace("      total: { type: integer, required: true, settable: true }\n", "      total:\n        |\n");
    editor.change(uri, 2, &marked.replace('|', ""));
    let keys = labels(&editor.at("textDocument/completion", uri, &marked));
    for key in ["type", "required", "nullable", "default", "filter", "sort"] {
        assert!(keys.contains(&key.to_owned()), "{key} in {keys:?}");
    }
    assert!(!keys.contains(&"fields".to_owned()), "a resource's key is not a field's: {keys:?}");

    // The words of a closed set: a field's type, in a flow map.
    let marked = SOUND.replace("type: integer", "type: |");
    editor.change(uri, 3, &marked.replace('|', ""));
    let types = labels(&editor.at("textDocument/completion", uri, &marked));
    for word in ["string", "integer", "decimal", "enum", "ref", "password"] {
        assert!(types.contains(&word.to_owned()), "{word} in {types:?}");
    }
    // A list's words, and the resources where a key names one.
    let marked = format!("{SOUND}    operations: [create, |]\n");
    editor.change(uri, 4, &marked.replace('|', ""));
    let operations = labels(&editor.at("textDocument/completion", uri, &marked));
    assert!(operations.contains(&"list".to_owned()) && operations.contains(&"delete".to_owned()), "{operations:?}");
    let marked = SOUND.replace("owner: user", "owner: |");
    editor.change(uri, 5, &marked.replace('|', ""));
    assert_eq!(labels(&editor.at("textDocument/completion", uri, &marked)), ["user", "order"]);
    editor.stop();
}

#[test]
fn hover_says_what_a_key_means_and_definition_finds_a_resource() {
    let uri = "file:///tmp/hover.yaml";
    let mut editor = Editor::start();
    editor.open(uri, SOUND);
    editor.diagnostics(uri);

    let hover = editor.at("textDocument/hover", uri, &SOUND.replace("    owner: user", "    ow|ner: user"));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("`owner`") && text.contains("principal"), "{text}");
    let hover = editor.at("textDocument/hover", uri, &SOUND.replace("type: integer", "type: inte|ger"));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("`type`") && text.contains("`integer` is one of"), "{text}");

    // From `owner: user` to `user:` under `resources`.
    let found = editor.at("textDocument/definition", uri, &SOUND.replace("owner: user", "owner: us|er"));
    assert_eq!(found["uri"], uri);
    assert_eq!(found["range"]["start"], json!({ "line": 5, "character": 2 }), "{found}");
    assert_eq!(found["range"]["end"], json!({ "line": 5, "character": 6 }), "{found}");
    // A request the server does not answer is refused, and it carries on.
    let refused = editor.request("textDocument/formatting", json!({ "textDocument": { "uri": uri }, "options": {} }));
    assert_eq!(refused["error"]["code"], -32601, "method not found: {refused}");
    // A word that names no resource goes nowhere.
    let nowhere = editor.at("textDocument/definition", uri, &SOUND.replace("type: string", "type: str|ing"));
    assert!(nowhere.is_null(), "{nowhere}");
    editor.stop();
}
