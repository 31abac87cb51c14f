// The mblint extension: runs `mblint lsp` for YAML and shell files.
'use strict';

const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;
let extensionPath;

// mblint.path when set; else the binary a release .vsix bundles (bin/mblint,
// tools/release.sh); else `mblint` on PATH.
function mblintCommand(config) {
  const configured = config.get('path');
  if (configured) return configured;
  const bundled = extensionPath && path.join(extensionPath, 'bin', 'mblint');
  if (bundled && fs.existsSync(bundled)) return bundled;
  return 'mblint';
}

function serverOptions() {
  const config = vscode.workspace.getConfiguration('mblint');
  const command = mblintCommand(config);
  const args = ['lsp', ...(config.get('args') || [])];
  return { command, args };
}

async function start() {
  client = new LanguageClient('mblint', 'mblint', serverOptions(), {
    documentSelector: [
      { scheme: 'file', language: 'yaml' },
      { scheme: 'file', language: 'shellscript' },
    ],
    synchronize: {
      // Scripts created or deleted change which script runs an override YAML.
      fileEvents: vscode.workspace.createFileSystemWatcher('**/*.{sh,sbatch,slurm,bash}'),
    },
  });
  await client.start();
}

async function activate(context) {
  extensionPath = context.extensionPath;
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration('mblint')) return;
      if (client) await client.stop();
      await start();
    }),
  );
  await start();
}

async function deactivate() {
  if (client) await client.stop();
}

module.exports = { activate, deactivate };
