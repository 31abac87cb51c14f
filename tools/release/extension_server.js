// Which mblint the VS Code extension starts (tools/test_release.sh): loads an
// extension.js with stand-ins for the `vscode` API and the language client,
// activates it, and prints the server command for each mblint.path setting.
//   node extension_server.js EXTENSION_DIR
'use strict';

const Module = require('module');
const path = require('path');

const extensionDir = path.resolve(process.argv[2]);
let setting = '';
const started = [];

const vscode = {
  workspace: {
    getConfiguration: () => ({ get: (key) => (key === 'path' ? setting : []) }),
    onDidChangeConfiguration: () => ({ dispose() {} }),
    createFileSystemWatcher: () => ({ dispose() {} }),
  },
};
class LanguageClient {
  constructor(id, name, serverOptions) {
    started.push(serverOptions.command);
  }
  async start() {}
  async stop() {}
}
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'vscode') return vscode;
  if (request === 'vscode-languageclient/node') return { LanguageClient };
  return load.call(this, request, ...rest);
};

(async () => {
  for (const value of ['', '/opt/custom/mblint']) {
    setting = value;
    delete require.cache[require.resolve(path.join(extensionDir, 'extension.js'))];
    const extension = require(path.join(extensionDir, 'extension.js'));
    await extension.activate({ extensionPath: extensionDir, subscriptions: [] });
    console.log(`${value === '' ? '(unset)' : value} -> ${started[started.length - 1]}`);
  }
})();
