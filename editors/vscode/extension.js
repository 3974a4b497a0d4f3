// Starts `restgen lsp` for the workspace's schema files (the `restgen.files` glob).
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const settings = vscode.workspace.getConfiguration("restgen");
  const command = settings.get("path", "restgen");
  const files = settings.get("files", "**/*.restgen.yaml");
  client = new LanguageClient(
    "restgen",
    "restgen",
    { command, args: ["lsp"] },
    { documentSelector: [{ scheme: "file", language: "yaml", pattern: files }] },
  );
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
